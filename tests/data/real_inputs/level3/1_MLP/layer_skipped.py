# Wrong: the MLP without its last hidden layer. Its output has the right shape, but a layer of
# the reference is missing: the verdict is incorrect and names the parameter that has no
# counterpart.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers, current = [], input_size
        for size in layer_sizes[:-1]:
            layers += [nn.Linear(current, size), nn.ReLU()]
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)
