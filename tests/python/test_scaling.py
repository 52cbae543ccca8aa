"""--scale keeps a task consistent (python/kgym_worker/scaling.py): constants derived from a
scaled one are derived again, and sizes stay above what the task's windows, groups and heads need."""
import torch

from kgym_worker import loading, probe

CONV_BIAS = '''
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, cin, cout, k, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k)
        self.bias = nn.Parameter(torch.randn(bias_shape))
    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias
batch_size = 32
in_channels = 3
out_channels = 128
height = width = 64
kernel_size = 7
bias_shape = (out_channels, 1, 1)
def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]
def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
'''

GROUPS = '''
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, c, g):
        super().__init__()
        self.gn = nn.GroupNorm(g, c)
    def forward(self, x):
        return self.gn(x)
batch, channels = 64, 32
num_groups = 8
layer_sizes = [64, 4]
def get_inputs():
    return [torch.rand(batch, channels, 4)]
def get_init_inputs():
    return [channels, num_groups]
'''


def test_a_derived_constant_is_derived_again_and_the_window_keeps_the_size():
    module, scaled = loading.load_task(CONV_BIAS, "kgym_task_t1", 0.05)
    assert module.out_channels == 6 and module.bias_shape == (6, 1, 1)  # not the unscaled 128
    assert scaled["derived"] == {"bias_shape": [6, 1, 1]}
    assert module.height == module.width == 8  # 64 x 0.05 = 3 is below the 7-wide kernel (+1)
    assert any("kept at 8" in n for n in scaled["notes"])
    _, model = probe.construct(module, "cpu", 0, "t1", 0.05)
    assert probe.probe(module, model, "cpu", "t1", 0.05)["output"] == [[2, 6, 2, 2]]


def test_groups_round_channels_up_and_tuples_and_lists_are_scaled():
    module, scaled = loading.load_task(GROUPS, "kgym_task_t2", 0.1)
    assert module.batch == 6  # unpacked from a tuple assignment
    assert module.channels == 8  # 32 x 0.1 = 3 rounded up to a multiple of the 8 groups
    assert module.layer_sizes == [6, 4]  # entries >= 16 scaled, small ones kept
    assert scaled["layer_sizes"] == [[64, 4], [6, 4]]


def test_a_task_that_cannot_run_is_named_with_its_scale_and_error():
    broken = CONV_BIAS.replace("kernel_size = 7", "kernel_size = 99")  # wider than the unscaled input
    out = probe.load_and_probe(broken, "cpu", "L9/1_broken", 0.05)
    assert not out["runs"]
    assert out["reason"].startswith("task L9/1_broken at scale 0.05 cannot run: the reference fails on the probe input")
    assert "Kernel size" in out["reason"] or "kernel size" in out["reason"]


def test_the_probe_leaves_the_reference_buffers_as_they_were():
    src = CONV_BIAS.replace("self.conv = nn.Conv2d(cin, cout, k)", "self.conv = nn.Sequential(nn.Conv2d(cin, cout, k), nn.BatchNorm2d(cout))")
    module, _ = loading.load_task(src, "kgym_task_t3", 0.05)
    _, model = probe.construct(module, "cpu", 0, "t3", 0.05)
    before = {n: b.clone() for n, b in model.named_buffers()}
    probe.probe(module, model, "cpu", "t3", 0.05)
    assert all(torch.equal(before[n], b) for n, b in model.named_buffers())
