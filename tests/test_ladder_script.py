"""benchmarks/ladder.py's CPU-side pieces: the cuobjdump and ncu parsers, the timing
plan, one size measured through a fake backend, the console and README tables, the
chart. No GPU needed; the whole file runs in seconds."""
import importlib.util
import json
import math
import shutil
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ladder import console, markdown, measure, ncu, resources, rungs, tables, timing  # noqa: E402
from ladder.rungs import Size  # noqa: E402

# `cuobjdump --dump-resource-usage` of torch_memopt._C built for sm_90a, trimmed to a
# few entries of each cubin: the naive kernel in three dtypes, the simple rungs, three
# upper-rung instantiations (one with an 8-byte stack) and one norm kernel.
CUOBJDUMP_SAMPLE = """
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit
identifier = /work/main/csrc/gemm/gemm_cuda.cu

Resource usage:
 Common:
  GLOBAL:28 CONSTANT[4]:224
 Function _ZN6memopt17gemm_naive_kernelIN3c108BFloat16EEEvPKT_llS5_llS5_PS3_lllNS_10ActivationE:
  REG:28 STACK:0 SHARED:0 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:620 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt17gemm_naive_kernelIN3c104HalfEEEvPKT_llS5_llS5_PS3_lllNS_10ActivationE:
  REG:28 STACK:0 SHARED:0 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:620 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt17gemm_naive_kernelIfEEvPKT_llS3_llS3_PS1_lllNS_10ActivationE:
  REG:27 STACK:0 SHARED:0 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:620 TEXTURE:0 SURFACE:0 SAMPLER:0

Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit
identifier = /work/main/csrc/gemm/ladder_simple.cu

Resource usage:
 Common:
  GLOBAL:0
 Function _ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE:
  REG:29 STACK:0 SHARED:9472 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt22gemm_smem_tiled_kernelILi1ELb1EEEvNS_8GemmArgsE:
  REG:32 STACK:0 SHARED:9472 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt22gemm_smem_tiled_kernelILi0ELb0EEEvNS_8GemmArgsE:
  REG:30 STACK:0 SHARED:9216 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt22gemm_smem_tiled_kernelILi0ELb1EEEvNS_8GemmArgsE:
  REG:32 STACK:0 SHARED:9216 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt27gemm_double_buffered_kernelILb0EEEvNS_8GemmArgsE:
  REG:32 STACK:0 SHARED:17920 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt27gemm_double_buffered_kernelILb1EEEvNS_8GemmArgsE:
  REG:32 STACK:0 SHARED:17920 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt21gemm_coalesced_kernelENS_8GemmArgsE:
  REG:27 STACK:0 SHARED:0 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0

Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit
compressed
identifier = /work/main/csrc/gemm/ladder_tiled.cu

Resource usage:
 Common:
  GLOBAL:0
 Function _ZN6memopt21gemm_warptiled_kernelILb1ELb1EEEvNS_8GemmArgsE:
  REG:128 STACK:8 SHARED:17920 LOCAL:0 CONSTANT[2]:1536 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt22gemm_vectorized_kernelILb1ELb0EEEvNS_8GemmArgsE:
  REG:127 STACK:0 SHARED:9472 LOCAL:0 CONSTANT[2]:1536 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _ZN6memopt28gemm_register_blocked_kernelILb0EEEvNS_8GemmArgsE:
  REG:129 STACK:0 SHARED:9216 LOCAL:0 CONSTANT[2]:768 CONSTANT[0]:624 TEXTURE:0 SURFACE:0 SAMPLER:0

Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit
identifier = /work/main/csrc/norm/norm_cuda.cu

Resource usage:
 Common:
  GLOBAL:28 CONSTANT[4]:224
 Function _ZN6memopt17norm_naive_kernelIffLb1EEEvPKT_PKT0_S6_PS1_llf:
  REG:30 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:580 TEXTURE:0 SURFACE:0 SAMPLER:0
"""

# `ncu --csv --page details --print-units base --nvtx ...` shape: ncu chatter first,
# NVTX columns between the standard ones, thousands separators, "n/a", two kernels.
NCU_CSV = """==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "gemm_smem_tiled_kernel": 0%....50%....100% - 9 passes
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","dram__bytes.sum","byte","402,653,184"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","dram__throughput.avg.pct_of_peak_sustained_elapsed","%","2.71"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","15,123,456"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum","","1,024"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","","0"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum","","1,024"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","4,194,304"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","16,777,216"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum","","0"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum","sector","0"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","launch__shared_mem_per_block_dynamic","byte","0"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","launch__shared_mem_per_block_static","Kbyte","9.47"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","sm__maximum_warps_per_active_cycle_pct","%","n/a"
"0","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","Command line profiler metrics","sm__warps_active.avg.pct_of_peak_sustained_active","%","95.5"
"1","4242","python3.12","h200","<default domain>:memopt_ladder","_ZN6memopt9fix_tailsEv","1","7","(128, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","2,048"
"""

SMALL = Size(64, 48, 32)


def test_parse_resource_usage_reads_every_function():
    functions = resources.parse_resource_usage(CUOBJDUMP_SAMPLE)
    assert len(functions) == 14
    warptiled = next(f for f in functions if "warptiled" in f["mangled"])
    assert warptiled == {
        "mangled": "_ZN6memopt21gemm_warptiled_kernelILb1ELb1EEEvNS_8GemmArgsE",
        "arch": "sm_90a",
        "identifier": "/work/main/csrc/gemm/ladder_tiled.cu",
        "registers": 128, "stack": 8, "shared_static": 17920, "local": 0,
        "fields": {"REG": 128, "STACK": 8, "SHARED": 17920, "LOCAL": 0, "CONSTANT[2]": 1536,
                   "CONSTANT[0]": 624, "TEXTURE": 0, "SURFACE": 0, "SAMPLER": 0},
    }


def test_parse_resource_usage_reads_fields_on_the_function_line():
    text = "arch = sm_80\n Function _Z17gemm_naive_kernelv: REG:40 STACK:16 SHARED:0 LOCAL:24\n"
    (function,) = resources.parse_resource_usage(text)
    got = (function["arch"], function["registers"], function["stack"], function["local"])
    assert got == ("sm_80", 40, 16, 24)


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="c++filt (binutils) is not installed")
def test_ladder_kernels_keeps_fp32_ladder_kernels_and_tells_the_smem_rungs_apart():
    kernels = resources.ladder_kernels(resources.parse_resource_usage(CUOBJDUMP_SAMPLE))
    assert len(kernels) == 11  # naive fp16 / bf16 and the norm kernel are left out
    by_rung = {}
    for kernel in kernels:
        by_rung.setdefault(kernel["rung"], []).append(kernel)
    assert list(by_rung) == ["naive", "smem_padded", "smem_tiled", "double_buffered",
                             "coalesced", "warptiled", "vectorized", "register_blocked"]
    assert {k["shared_static"] for k in by_rung["smem_padded"]} == {9472}  # 2 x 32 x 33 x 4 + 0
    assert {k["shared_static"] for k in by_rung["smem_tiled"]} == {9216}  # 2 x 32 x 32 x 4 + 1024
    assert by_rung["naive"][0]["template_args"] == ["float"]
    assert by_rung["coalesced"][0]["template_args"] == []
    assert not any(k["launched"] for k in kernels)


def test_names_ncu_saw_launched_decide_the_rung():
    mangled = "_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE"
    kernels = resources.ladder_kernels(resources.parse_resource_usage(CUOBJDUMP_SAMPLE),
                                       {"smem_tiled": [mangled]})
    (kernel,) = [k for k in kernels if k["mangled"] == mangled]
    assert (kernel["rung"], kernel["launched"]) == ("smem_tiled", True)


@pytest.mark.parametrize("demangled, rung", [
    ("void memopt::gemm_smem_tiled_kernel<1, false>(memopt::GemmArgs)", "smem_padded"),
    ("void memopt::gemm_smem_tiled_kernel<0, true>(memopt::GemmArgs)", "smem_tiled"),
    ("void memopt::gemm_smem_tiled_kernel<true, 0u>(memopt::GemmArgs)", "smem_tiled"),
    ("void memopt::gemm_warptiled_kernel<true, false>(memopt::GemmArgs)", "warptiled"),
    ("void memopt::gemm_naive_kernel<float>(float const*, long)", "naive"),
    ("void memopt::softmax_naive_kernel<float, float>(float const*)", None),
])
def test_rung_of(demangled, rung):
    assert resources.rung_of("", demangled) == rung


def test_template_arguments_split_at_the_top_level_only():
    name = "void ns::k<float, ns::Tile<128, 8>, (ns::Mode)2>(int)"
    assert resources.template_arguments(name) == ["float", "ns::Tile<128, 8>", "(ns::Mode)2"]
    assert resources.padding_argument(resources.template_arguments(name)) == 2


def test_choose_arch_prefers_the_device_then_the_highest():
    kernels = [{"arch": a} for a in ("sm_80", "sm_90a", "sm_90", "sm_100a")]
    assert resources.choose_arch(kernels, (9, 0)) == "sm_90a"
    assert resources.choose_arch(kernels, None) == "sm_100a"
    assert resources.choose_arch(kernels, (7, 5)) == "sm_100a"


def test_spill_warnings_name_upper_rung_kernels_with_local_memory_or_stack():
    section = {"arch": "sm_90a", "kernels": resources.ladder_kernels(
        resources.parse_resource_usage(CUOBJDUMP_SAMPLE))}
    (warning,) = resources.spill_warnings(section, ("warptiled", "vectorized"))
    assert warning.startswith("warptiled") and "STACK 8 B" in warning


def test_ncu_csv_parses_kernels_units_and_separators():
    kernels = ncu.parse_csv(NCU_CSV)
    assert [k["id"] for k in kernels] == ["0", "1"]
    first = kernels[0]
    assert first["name"] == "_ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE"
    assert first["metrics"]["dram__bytes.sum"] == {"value": 402653184.0, "unit": "byte"}
    assert first["metrics"]["sm__maximum_warps_per_active_cycle_pct"]["value"] is None
    assert ncu.main_kernel(kernels) == 0
    derived = ncu.derive(first, Size(4096, 4096, 4096))
    assert derived["global_ld_sectors_per_request"] == 4.0
    assert derived["global_ldgsts_sectors_per_request"] is None  # 0 requests: no ratio
    assert derived["smem_bank_conflicts"] == 1024 and derived["smem_bank_conflicts_st"] == 1024
    assert derived["duration_ms"] == pytest.approx(15.123456)
    assert derived["smem_static_bytes"] == pytest.approx(9470)
    assert derived["dram_bytes_over_compulsory"] == pytest.approx(2.0)  # 3 x 64 MiB compulsory
    assert derived["achieved_occupancy_pct"] == 95.5


@pytest.mark.parametrize("text, value", [("1,234", 1234.0), (" 5.5 ", 5.5), ("n/a", None), ("", None)])
def test_parse_number(text, value):
    assert ncu.parse_number(text) == value


def test_ncu_command_profiles_the_nvtx_range_at_the_gpus_own_clocks():
    cmd = ncu.command("ncu", ["a.sum", "b.sum"], "nvtx", "/tmp/x.log", ["python", "ladder.py"])
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--nvtx-include") + 1] == "memopt_ladder/"
    assert cmd[cmd.index("--metrics") + 1] == "a.sum,b.sum"
    assert cmd[-2:] == ["python", "ladder.py"]
    named = ncu.command("ncu", ["a.sum"], "name", "/tmp/x.log", ["python"])
    assert named[named.index("--kernel-name") + 1] == "regex:gemm" and "--nvtx" not in named


def test_profiler_drops_unknown_metrics_then_falls_back_to_the_name_filter():
    calls = []

    def runner(cmd, timeout):
        calls.append(cmd)
        metrics = cmd[cmd.index("--metrics") + 1]
        if "launch__grid_size" in metrics:
            return 1, "==ERROR== Failed to find metric launch__grid_size"
        if "--nvtx" in cmd:
            return 0, "==WARNING== No kernels were profiled."
        return 0, NCU_CSV

    profiler = ncu.Profiler("ncu", lambda v: ["python", "ladder.py", "--ncu-child", v],
                            Size(4096, 4096, 4096), runner=runner, log=lambda line: None)
    record = profiler.profile("smem_padded")
    assert (record["status"], record["filter"], record["main_kernel"]) == ("ok", "name", 0)
    assert "launch__grid_size" not in profiler.metrics and len(calls) == 3
    assert profiler.profile("warptiled")["status"] == "ok" and len(calls) == 4


def test_profiler_reads_the_report_from_ncus_log_file(tmp_path):
    """The real subprocess path, with a stand-in ncu that writes the sample CSV to
    --log-file and chatter to stdout, as ncu does."""
    (tmp_path / "sample.csv").write_text(NCU_CSV)
    fake = tmp_path / "ncu"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "args = sys.argv[1:]\n"
        "assert args[args.index('--ncu-child') + 1] == 'smem_padded'\n"
        f"report = open({str(tmp_path / 'sample.csv')!r}).read()\n"
        "open(args[args.index('--log-file') + 1], 'w').write(report)\n"
        "print('==PROF== Disconnected')\n"
    )
    fake.chmod(0o755)
    profiler = ncu.Profiler(str(fake), lambda v: ["python", "ladder.py", "--ncu-child", v],
                            Size(4096, 4096, 4096), log=lambda line: None)
    record = profiler.profile("smem_padded")
    assert record["status"] == "ok" and record["filter"] == "nvtx" and len(record["kernels"]) == 2


def test_profiler_stops_at_a_counter_permission_error():
    def runner(cmd, timeout):
        return 1, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission"

    profiler = ncu.Profiler("ncu", lambda v: [v], Size(64, 64, 64), runner=runner,
                            log=lambda line: None)
    record = profiler.profile("naive")
    assert record["status"] == "error" and "ERR_NVGPUCTRPERM" in record["reason"]


@pytest.mark.parametrize("text, sizes", [
    ("4096", (Size(4096, 4096, 4096),)),
    ("8192x4096x4096,4095", (Size(8192, 4096, 4096), Size(4095, 4095, 4095))),
    ("8×4×2", (Size(8, 4, 2),)),
])
def test_parse_sizes(text, sizes):
    assert rungs.parse_sizes(text) == sizes


def test_parse_size_refuses_nonsense():
    with pytest.raises(ValueError, match="expected a size like 4096 or 8192x4096x4096, got '4096x0x1'"):
        rungs.parse_size("4096x0x1")


def test_select_rungs_orders_by_the_ladder_and_names_what_is_available():
    available = ["auto", "warptiled", "naive", "coalesced"]
    assert rungs.select_rungs(available, None) == ["naive", "coalesced", "warptiled", "auto"]
    assert rungs.select_rungs(available, ["warptiled", "naive"]) == ["naive", "warptiled"]
    message = "unknown or unavailable gemm variant.*vectorized.*offer: naive, coalesced"
    with pytest.raises(ValueError, match=message):
        rungs.select_rungs(available, ["vectorized"])


def test_timing_plan_caps_slow_rungs_and_gives_fast_ones_ten_reps():
    assert timing.plan_for(2200.0, rep_ms=100, have_do_bench=True) == timing.Plan("event_reps", 3, None)
    assert timing.plan_for(150.0, rep_ms=100, have_do_bench=True) == timing.Plan("event_reps", 6, None)
    assert timing.plan_for(30.0, rep_ms=100, have_do_bench=True) == timing.Plan("do_bench", None, 300.0)
    assert timing.plan_for(0.05, rep_ms=100, have_do_bench=True) == timing.Plan("do_bench", None, 100)
    assert timing.plan_for(1.0, rep_ms=100, have_do_bench=False) == timing.Plan("event_reps", 100, None)
    assert not timing.cross_check_wanted(150.0) and timing.cross_check_wanted(30.0)


class FakeBackend:
    """CPU stand-in for backend.CudaBackend: real matmuls on small inputs, invented times."""

    have_do_bench = True
    MS = {"cublas": 2.0, "naive": 200.0, "coalesced": 40.0, "smem_tiled": 20.0,
          "smem_padded": 18.0, "double_buffered": 9.0, "warptiled": 2.5, "auto": 2.5}

    def __init__(self):
        self.current = None
        self.made = 0

    def inputs(self, size, count):
        self.made += count
        return [(torch.randn(SMALL.M, SMALL.K), torch.randn(SMALL.K, SMALL.N)) for _ in range(count)]

    def function(self, variant):
        self.current = variant
        if variant == "smem_tiled":
            return lambda a, b: torch.mm(a, b) + 1.0  # wrong: flagged, still timed
        if variant == "double_buffered":
            return lambda a, b: torch.full((SMALL.M, SMALL.N), float("nan"))
        if variant == "coalesced":
            def refuse(a, b):
                raise RuntimeError("memopt::gemm: coalesced refuses this\nsecond line")
            return refuse
        return torch.mm

    def probe_ms(self, call):
        call()
        return self.MS[self.current]

    def time(self, call, estimate_ms):
        return self.MS[self.current], timing.plan_for(estimate_ms, rep_ms=100, have_do_bench=True)

    def cross_set_count(self, size):
        return 3

    def cross(self, fn, input_sets, label):
        assert len(input_sets) == 3
        return self.MS[self.current] * 1.02


def fake_records(size, max_naive_size=None, lines=None):
    variants = ["naive", "coalesced", "smem_tiled", "smem_padded", "warptiled", "auto"]
    log = lines.append if lines is not None else (lambda line: None)
    return measure.measure_size(size, variants, FakeBackend(), max_naive_size=max_naive_size,
                                cross_check=True, log=log)


def test_measure_size_checks_times_and_relates_every_rung():
    lines = []
    size = Size(4096, 4096, 4096)
    records = {r["variant"]: r for r in fake_records(size, lines=lines)}
    assert list(records) == ["cublas", "naive", "coalesced", "smem_tiled", "smem_padded",
                             "warptiled", "auto"]
    assert records["cublas"]["correct"] is None and records["cublas"]["pct_cublas"] == 100.0
    assert records["naive"]["correct"] is True and records["naive"]["rel_err_vs_cublas"] < 1e-6
    assert records["naive"]["method"] == "event_reps" and records["naive"]["timer_ms"] is None
    assert records["smem_tiled"]["correct"] is False and records["smem_tiled"]["ms"] == 20.0
    assert records["coalesced"]["status"] == "error"
    assert records["coalesced"]["reason"] == "RuntimeError: memopt::gemm: coalesced refuses this"
    warptiled = records["warptiled"]
    assert warptiled["speedup_vs_naive"] == pytest.approx(80.0)
    assert warptiled["pct_cublas"] == pytest.approx(80.0)
    assert warptiled["tflops"] == pytest.approx(size.flop / 2.5e-3 / 1e12)
    assert warptiled["timer_ms"] == pytest.approx(2.55) and warptiled["method"] == "do_bench"
    assert records["smem_padded"]["published_speedup_vs_naive"] is None
    assert records["smem_tiled"]["published_speedup_vs_naive"] == 3.2
    assert len(lines) == 7 and "WRONG" in lines[3] and "error" in lines[2]


def test_measure_size_reports_skipped_naive_and_leaves_speedups_empty():
    records = {r["variant"]: r for r in fake_records(Size(8192, 8192, 8192), max_naive_size=4096)}
    assert records["naive"]["status"] == "skipped"
    assert records["naive"]["reason"] == "skipped: naive above --max-naive-size 4096"
    assert records["warptiled"]["speedup_vs_naive"] is None
    assert records["warptiled"]["pct_cublas"] == 80.0


def test_measure_size_flags_a_non_finite_output_without_writing_inf():
    (_, record) = measure.measure_size(Size(4096, 4096, 4096), ["double_buffered"], FakeBackend(),
                                       max_naive_size=None, cross_check=False, log=lambda s: None)
    assert record["correct"] is False and record["rel_err_vs_cublas"] is None
    assert record["reason"] == "output of a wrong shape or with non-finite values"
    json.dumps(record, allow_nan=False)


def test_relative_frobenius_error_is_inf_for_a_wrong_shape_or_nan():
    ref = torch.ones(4, 4)
    assert measure.relative_frobenius_error(ref * (1 + 1e-3), ref) == pytest.approx(1e-3, rel=1e-3)
    assert measure.relative_frobenius_error(torch.ones(4, 3), ref) == math.inf
    assert measure.relative_frobenius_error(torch.full((4, 4), float("nan")), ref) == math.inf


@pytest.fixture
def document():
    """A synthetic results file: fake timings at 4096³ and 8192³, the sampled cuobjdump
    resources and the sampled ncu CSV."""
    kernels = ncu.parse_csv(NCU_CSV)
    return {
        "meta": {"gpu": "NVIDIA H200", "capability": "9.0", "torch": "2.11.0+cu130", "cuda": "13.0",
                 "driver": "580.159.04", "date": "2026-11-30T10:00:00+00:00",
                 "timing": "median of per-call CUDA-event times, L2 flushed",
                 "cublas": "torch.mm with torch.backends.cuda.matmul.allow_tf32 = False",
                 "tolerance": 1e-4},
        "published_speedup_vs_naive": dict(rungs.PUBLISHED_SPEEDUP),
        "results": fake_records(Size(4096, 4096, 4096)) + fake_records(Size(8192, 8192, 8192)),
        "resources": {"source": "cuobjdump --dump-resource-usage", "binary": "_C.so", "arch": "sm_90a",
                      "archs": ["sm_90a"], "kernels": resources.ladder_kernels(
                          resources.parse_resource_usage(CUOBJDUMP_SAMPLE),
                          {"smem_padded": [kernels[0]["name"]]})},
        "ncu": {"tool": "Version 2025.3.1", "size": {"M": 4096, "N": 4096, "K": 4096},
                "variants": [
                    {"variant": "smem_padded", "status": "ok", "reason": None, "filter": "nvtx",
                     "kernels": kernels, "main_kernel": 0,
                     "derived": ncu.derive(kernels[0], Size(4096, 4096, 4096))},
                    {"variant": "naive", "status": "error", "reason": "ncu exit 1: boom",
                     "filter": None, "kernels": [], "main_kernel": None, "derived": None},
                ]},
    }


def test_ladder_table_puts_ours_beside_the_published_claims(document):
    headers, rows = tables.ladder_table(document)
    assert headers == ["rung", "TFLOP/s 4096³", "TFLOP/s 8192³", "× naive 4096³",
                       "published × naive", "% cuBLAS 4096³", "% cuBLAS 8192³", "max rel err"]
    by_rung = {row[0]: row for row in rows}
    assert by_rung["cuBLAS (torch.mm, tf32 off)"][5] == "100.0%"
    assert by_rung["smem_tiled"][4] == "3.20×" and by_rung["smem_tiled"][1].endswith("✗")
    assert by_rung["warptiled"][3:7] == ["80.0×", "—", "80.0%", "80.0%"]
    assert by_rung["coalesced"][1] == "error" and by_rung["coalesced"][4] == "1.80×"
    assert list(by_rung)[-1] == "auto"


def test_readme_section_renders_all_three_tables_and_the_chart(document):
    text = markdown.section(document, "benchmarks/results/gemm_ladder_h200.png")
    assert text.startswith(
        "NVIDIA H200 (sm 9.0), torch 2.11.0+cu130, CUDA 13.0, driver 580.159.04, 2026-11-30")
    assert "![FP32 GEMM ladder: TFLOP/s per rung](benchmarks/results/gemm_ladder_h200.png)" in text
    assert "| smem_padded | 1, false | 29 | 9,472 | 0 | 0 | 0 | yes |" in text
    assert "| smem_padded | 15.12 | 4 | — | 1,024 (0 / 1,024) | 95.5% | 2.7% | 2.00× |" in text
    assert "| naive | error | — | — | — | — | — | ncu exit 1: boom |" in text
    for block in text.split("\n\n"):
        if block.startswith("|"):
            rows = [line for line in block.splitlines() if not line.startswith("|--")]
            widths = {len(line.split(" | ")) for line in rows}
            assert len(widths) == 1, block  # every row has the header's number of cells


def test_readme_tables_says_no_results_yet_without_the_json(tmp_path, monkeypatch):
    import readme_tables

    monkeypatch.setattr(readme_tables, "RESULTS", tmp_path)
    monkeypatch.setattr(readme_tables, "LADDER_CHART", tmp_path / "gemm_ladder_h200.png")
    monkeypatch.setattr(readme_tables, "ROOT", tmp_path)
    assert "_No results yet: `gemm_ladder_h200.json` is missing._" in readme_tables.results_section()


def test_readme_tables_renders_the_ladder_json(tmp_path, monkeypatch, document):
    import readme_tables

    (tmp_path / "gemm_ladder_h200.json").write_text(json.dumps(document))
    monkeypatch.setattr(readme_tables, "RESULTS", tmp_path)
    monkeypatch.setattr(readme_tables, "LADDER_CHART", tmp_path / "gemm_ladder_h200.png")
    monkeypatch.setattr(readme_tables, "ROOT", tmp_path)
    section = readme_tables.results_section()
    assert "Source: `gemm_ladder_h200.json`." in section and "| warptiled |" in section
    assert "![" not in section  # no chart drawn yet: no broken image link


def test_console_report_prints_every_table(document):
    lines = []
    console.report(document, lines.append)
    text = "\n".join(lines)
    assert "4096³ (4096x4096x4096): cuBLAS 68.7 TFLOP/s" in text
    assert "Resources per kernel (cuobjdump --dump-resource-usage, sm_90a)" in text
    assert "Nsight Compute at 4096³ (Version 2025.3.1)" in text
    header = next(line for line in lines if line.startswith("variant")).split("\n")[0]
    assert "published × naive" in header


def test_plot_writes_a_png(tmp_path, document):
    pytest.importorskip("matplotlib")
    import plot_ladder

    out = tmp_path / "ladder.png"
    plot_ladder.plot(document, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _script():
    spec = importlib.util.spec_from_file_location("ladder_script", ROOT / "benchmarks" / "ladder.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_defaults_and_quick_sizes():
    script = _script()
    assert script.parse_args([]).sizes == rungs.DEFAULT_SIZES
    assert script.parse_args(["--quick"]).sizes == (Size(1024, 1024, 1024), Size(4096, 4096, 4096))
    args = script.parse_args(["--sizes", "512,8192x4096x4096", "--max-naive-size", "4096"])
    assert args.sizes == (Size(512, 512, 512), Size(8192, 4096, 4096)) and args.max_naive_size == 4096


@pytest.mark.skipif(resources.find_cuobjdump() is None, reason="cuobjdump not found")
def test_cli_resources_from_the_real_extension(tmp_path, capsys):
    import torch_memopt

    if not torch_memopt.built_with_cuda():
        pytest.skip("this build has no CUDA kernels to read")
    out = tmp_path / "ladder.json"
    status = _script().main(["--no-timing", "--resources", "--out", str(out)])
    assert status == 0
    section = json.loads(out.read_text())["resources"]
    naive = [k for k in section["kernels"] if k["rung"] == "naive"]
    assert naive and all(k["identifier"].startswith("csrc/") for k in section["kernels"])
    assert "Resources per kernel" in capsys.readouterr().out
