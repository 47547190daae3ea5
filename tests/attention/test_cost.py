"""Lesson 11's cost: the fused path runs PyTorch's fused kernel, and memory is measured by the
profiler, not counted (issue 17 item 1: a 3-D call ran the unfused math path)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from attention.cost import fused_attention, measure_costs, naive_attention, profile_call

FLASH_CPU = "aten::_scaled_dot_product_flash_attention_for_cpu"
MATH = "aten::_scaled_dot_product_attention_math"


@pytest.fixture(scope="module")
def costs():
    return {cost.T: cost for cost in measure_costs((256, 1024), repeats=2)}


def test_cost_fused_path_runs_the_flash_kernel_and_never_a_t_by_t_matrix(costs):
    for T, cost in costs.items():
        assert cost.fused.kernel == FLASH_CPU
        assert FLASH_CPU in cost.fused.ops
        assert MATH not in cost.fused.ops
        assert "aten::bmm" not in cost.fused.ops and "aten::softmax" not in cost.fused.ops
        assert cost.fused.ops_reading(T, T) == ()  # no op took a T x T tensor
        # the naive path does pass the T x T scores and weights between its ops
        assert {"aten::div", "aten::softmax"} <= set(cost.naive.ops_reading(T, T))
        assert cost.naive.kernel == "aten::transpose, aten::matmul, aten::div, aten::softmax, " \
            "aten::matmul"  # fmt: skip


def test_cost_fused_peak_memory_is_measured_well_below_the_naive_t_by_t_bytes(costs):
    for T, cost in costs.items():
        matrix = 2 * T * T * 4  # float32 scores and weights, as naive attention holds them
        output = T * 64 * 4
        assert cost.matrix_bytes == matrix
        assert cost.macs == 2 * T * T * 64  # q k^T and weights v, d = 64
        assert matrix <= cost.naive.peak_bytes <= matrix + 4 * output  # measured: S, P, a few
        assert cost.fused.peak_bytes < matrix / 3
        assert cost.fused.peak_bytes >= output  # it does allocate its output
    assert costs[1024].fused.peak_bytes < costs[1024].matrix_bytes / 8
    # the fused kernel's peak grows far slower than T²: 16 x the matrix, under 16 x the memory
    assert costs[1024].fused.peak_bytes < 8 * costs[256].fused.peak_bytes
    assert costs[1024].naive.peak_bytes > 12 * costs[256].naive.peak_bytes


def test_cost_times_every_run_of_both(costs):
    for cost in costs.values():
        assert len(cost.naive_runs) == len(cost.fused_runs) == 2
        assert all(s > 0 for s in cost.naive_runs + cost.fused_runs)
        assert min(cost.naive_runs) <= cost.naive_s <= max(cost.naive_runs)


def test_cost_a_3d_call_takes_sdpas_unfused_math_path():
    """Why the shape matters: (B, T, d) runs bmm and softmax on the whole T x T matrix."""
    q, k, v = (torch.randn(1, 128, 16) for _ in range(3))
    profiled = profile_call(fused_attention, q, k, v)
    assert profiled.kernel == MATH
    assert "aten::bmm" in profiled.ops and profiled.ops_reading(128, 128)
    assert profiled.peak_bytes >= 128 * 128 * 4


def test_cost_profile_call_peak_is_the_running_sum_of_allocations_and_frees():
    def allocate(q, k, v):
        big = torch.empty(1000)  # 4,000 bytes, freed before the small one is made
        del big
        return torch.empty(10)  # 40 bytes

    q = torch.zeros(1)
    assert profile_call(allocate, q, q, q).peak_bytes == 4000

    def hold(q, k, v):
        first, second = torch.empty(1000), torch.empty(500)  # both held: 6,000 bytes
        return first[:1] + second[:1]  # 4 more

    assert profile_call(hold, q, q, q).peak_bytes == 6004


def test_cost_naive_attention_equals_sdpa():
    q, k, v = (torch.randn(1, 2, 9, 4, generator=torch.Generator().manual_seed(i))
               for i in range(3))  # fmt: skip
    torch.testing.assert_close(naive_attention(q, k, v), fused_attention(q, k, v))


@pytest.mark.parametrize(("lengths", "repeats"), [((), 1), ((0,), 1), ((64.0,), 1),
                                                  ((64,), 0), ((True,), 1)])  # fmt: skip
def test_cost_measure_costs_rejects_bad_input(lengths, repeats):
    with pytest.raises(ValueError):
        measure_costs(lengths, repeats=repeats)


def test_cost_profiling_leaves_the_compiler_stack_unimported():
    """torch.profiler.profile's start imports torch._inductor and torch._dynamo (~800 modules,
    +75 MiB on a server) to read a GPU setting; lesson 11 profiles without them."""
    script = (
        "import sys, torch\n"
        "from attention.cost import fused_attention, profile_call\n"
        "q = torch.randn(1, 1, 64, 8)\n"
        "profile_call(fused_attention, q, q, q)\n"
        "print(sorted(m for m in ('torch._inductor', 'torch._dynamo') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=Path(__file__).parents[2], check=True)  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[]"
