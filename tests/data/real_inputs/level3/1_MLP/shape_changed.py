# Wrong: the MLP with each hidden layer one unit wider than the reference's. Its output has the
# right shape, but its parameters differ from the reference's under the same init seed: the
# verdict is incorrect and says which parameter's shape changed.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers, current = [], input_size
        for size in layer_sizes:
            layers += [nn.Linear(current, size + 1), nn.ReLU()]
            current = size + 1
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)
