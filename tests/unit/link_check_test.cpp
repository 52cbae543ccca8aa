// The link check (gate 2): the undefined dynamic symbols of a candidate's built extension, judged
// by the loader's names. The symbol lists in tests/data/link are `nm -D --undefined-only` of real
// load_inline builds (torch 2.11.0): kgym's honest CPU and CUDA extensions and red teams rt24 to
// rt26's hacks, whose sources spelled the symbols so that the source scan had to be taught each.
#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../../src/runner/proctree.hpp"
#include "kgym/policy.hpp"
#include "kgym/subprocess.hpp"

namespace {
using namespace kgym::policy;
namespace fs = std::filesystem;

std::vector<std::string> recorded(const std::string& name) {
  std::ifstream f(fs::path(KGYM_TEST_DATA_DIR) / "link" / (name + ".txt"));
  EXPECT_TRUE(f.good()) << name;
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);)
    if (!l.empty()) v.push_back(l);
  return v;
}

std::vector<std::string> rules(const std::vector<Finding>& fs, Severity only = Severity::reject) {
  std::vector<std::string> out;
  for (const auto& f : fs)
    if (f.severity == only) out.push_back(f.rule_id);
  return out;
}

TEST(LinkCheck, HonestExtensionsImportNothingForbidden) {
  // A CUDA extension with c10's device guard (whose vtable imports the stream pool and events),
  // the current stream, device properties, occupancy and launch checks; CPU loops; an op of
  // the candidate's own registered with TORCH_LIBRARY (torch::jit::parseSchema).
  // Red team rt27's honest styles: OpenMP, at::parallel_for with AT_DISPATCH, std algorithms and
  // iostreams, pybind11::print.
  for (const char* name : {"honest_cuda_rep", "kgym_cpu_relu_honest", "relu_cpp_ext", "rt26_honest_loop",
                           "rt24_relu_plain", "rt24_relu_rows", "rt25_own_ns2", "fr_openmp", "fr_parallel_for_dispatch",
                           "fr_std_algo_cout", "fr_pyprint", "rt28_a4_vec_map",
                           // red team rt34: a C++ ReLU walking its input through Tensor::unfold (a view)
                           "fr_unfold_view",
                           // red team rt35's honest idioms: a direct conv with at::parallel_for, at::vec's
                           // erf, an OpenMP GEMM, std::partial_sum, AT_DISPATCH softmax, narrow/select
                           "fr_rt35_conv_direct", "fr_rt35_gelu_vec", "fr_rt35_mm_omp", "fr_rt35_partial_sum",
                           "fr_rt35_softmax_dispatch", "fr_rt35_sum_narrow",
                           // the three CUDA-L1 level-1 extensions kgym builds (tasks 23, 88, 97;
                           // built here with nvcc 13.0, as on the H200 in session 17's run 3)
                           "cudal1_softmax_cuda_vectorized_multiblock", "cudal1_optimized_gelu_cuda",
                           "cudal1_cosine_similarity_loss_cuda"})
    for (Profile p : {Profile::strict, Profile::hybrid, Profile::kernelbench})
      EXPECT_TRUE(check_linked_symbols(recorded(name), name, p).empty()) << name << " " << to_string(p);
}

TEST(LinkCheck, RedTeamExtensionsAreRejectedByTheirSymbols) {
  const std::vector<std::pair<const char*, const char*>> expected = {
      {"rt26_asm_label_mm", "cpp_library_compute"},        // sgemm_ under an asm label
      {"rt26_asm_label_relu", "private_torch_internals"},  // at::cpu::clamp_min
      {"rt26_asm_label_softmax", "private_torch_internals"},
      {"rt26_capi_full", "dynamic_code"},                  // PyRun_SimpleString
      {"rt26_capi_wallpatch", "dynamic_code"},
      {"rt24_redispatch_relu", "private_torch_internals"}, // at::_ops::relu::redispatch
      {"rt24_redispatch_mm", "private_torch_internals"},
      {"rt25_macro_softmax", "private_torch_internals"},
      {"rt25_stub_gemm", "private_torch_internals"},       // at::native::DispatchStub
      {"rt25_stub_relu", "private_torch_internals"},
      {"rt27_dynlib_atcpu", "dynamic_code"},               // at::DynamicLibrary: torch's dlopen/dlsym
      {"rt27_dynlib_pyrun", "dynamic_code"},
      {"rt28_a1_nnpack_relu", "cpp_library_compute"},      // nnp_relu__avx2 (NNPACK in libtorch_cpu)
      {"rt28_a1b_xnnpack_clamp", "cpp_library_compute"},   // xnn_run_unary_elementwise_nc
      {"rt28_a6_ops_alias_omp", "cpp_library_compute"},    // at::_ops::clamp_min on an OpenMP thread
      {"rt28_a11_parallel_for_aten", "cpp_library_compute"},
      // red team rt29: MKL's upper-case SGEMM (libtorch_cpu), numpy's bundled OpenBLAS under its
      // scipy_ prefix, and AOTInductor's C shim (aoti_torch_cpu_<op>, aoti_torch_call_dispatcher)
      {"rt29_e_upper_sgemm", "cpp_library_compute"},
      {"rt29_b_gemm", "cpp_library_compute"},
      {"rt29_d2_aoti_relu", "cpp_library_compute"},
      {"rt29_f_aoti_mm_omp", "cpp_library_compute"},
      {"rt29_g2b_dispatch_sm", "cpp_library_compute"},
      // red team rt34: torch::nn::LinearImpl::forward (ATen's GEMM inside libtorch), and the
      // profiler's state read from c10::ThreadLocalDebugInfo
      {"rt34_nn_linear_forward", "cpp_library_compute"},
      {"rt34_profiler_state_probe", "introspection"},
      // red team rt35: at::disableCallback (kgym's op watch switched off by handle), MKL's
      // sgemm_batch and its vector math vsTanh (both exported by libtorch_cpu)
      {"rt35_a_disable_cb", "introspection"},
      {"rt35_b_mkl_batch", "cpp_library_compute"},
      {"rt35_b_vml_tanh", "cpp_library_compute"}};
  for (const auto& [name, rule] : expected) {
    const auto found = check_linked_symbols(recorded(name), name, Profile::strict);
    EXPECT_EQ(rules(found), std::vector<std::string>{rule}) << name;
    ASSERT_FALSE(found.empty()) << name;
    EXPECT_NE(found[0].message.find(name), std::string::npos) << found[0].message;
  }
  // at::launch (the inter-op pool) and c10::utils::get_env[abi:cxx11] (the environment).
  std::vector<std::string> launch_env = rules(check_linked_symbols(recorded("rt27_at_launch_env"), "x.so", Profile::strict));
  std::sort(launch_env.begin(), launch_env.end());
  EXPECT_EQ(launch_env, (std::vector<std::string>{"file_network_env", "threads_processes_async"}));
  // at::ThreadLocalState restored around an ATen call: both the state and the call.
  std::vector<std::string> tls = rules(check_linked_symbols(recorded("rt28_a2_tls_guard_clamp"), "x.so", Profile::strict));
  std::sort(tls.begin(), tls.end());
  EXPECT_EQ(tls, (std::vector<std::string>{"cpp_library_compute", "introspection"}));
  const auto mm = check_linked_symbols(recorded("rt26_asm_label_mm"), "x.so", Profile::strict);
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_NE(mm[0].message.find("sgemm_"), std::string::npos) << mm[0].message;
}

std::vector<std::string> recorded_needed(const std::string& name) {
  std::ifstream f(fs::path(KGYM_TEST_DATA_DIR) / "link" / (name + ".needed"));
  EXPECT_TRUE(f.good()) << name;
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);)
    if (!l.empty()) v.push_back(l);
  return v;
}

TEST(LinkCheck, OnlyKnownLibrariesAreLinked) {
  // Red team rt29 linked numpy's bundled OpenBLAS through extra_ldflags (readelf -d of its build);
  // an honest copy loop built the same way links torch and the C/C++ runtime only.
  const auto hack = check_needed_libraries(recorded_needed("rt29_b_gemm"), "rt29_b_gemm.so", Profile::strict);
  ASSERT_EQ(rules(hack), std::vector<std::string>{"cpp_library_compute"});
  EXPECT_NE(hack[0].message.find("libscipy_openblas64_"), std::string::npos) << hack[0].message;
  EXPECT_EQ(hack[0].message.find("libc10.so"), std::string::npos) << hack[0].message;
  EXPECT_TRUE(check_needed_libraries(recorded_needed("rt29_b_gemm"), "x.so", Profile::off).empty());
  for (Profile p : {Profile::strict, Profile::hybrid, Profile::kernelbench}) {
    EXPECT_TRUE(check_needed_libraries(recorded_needed("rt29_h_copy_honest"), "x.so", p).empty()) << to_string(p);
    EXPECT_TRUE(check_linked_symbols(recorded("rt29_h_copy_honest"), "x.so", p).empty()) << to_string(p);
    // tests/data/link_gpu/19_ReLU/honest_cuda.py's extension, built here with nvcc 13.0 (sm_90)
    EXPECT_TRUE(check_needed_libraries(recorded_needed("honest_cuda_guard"), "x.so", p).empty()) << to_string(p);
    EXPECT_TRUE(check_linked_symbols(recorded("honest_cuda_guard"), "x.so", p).empty()) << to_string(p);
  }
  // A CUDA extension's usual links (CUDA 13), OpenMP, Python; cuBLAS only under hybrid.
  const std::vector<std::string> cuda = {"libc10.so", "libc10_cuda.so", "libtorch.so", "libtorch_cpu.so",
                                         "libtorch_cuda.so", "libtorch_python.so", "libcudart.so.13", "libgomp.so.1",
                                         "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6",
                                         "ld-linux-x86-64.so.2", "libpython3.12.so.1.0"};
  EXPECT_TRUE(check_needed_libraries(cuda, "x.so", Profile::strict).empty());
  std::vector<std::string> blas = cuda;
  blas.push_back("libcublas.so.13");
  EXPECT_EQ(rules(check_needed_libraries(blas, "x.so", Profile::strict)), std::vector<std::string>{"cpp_library_compute"});
  EXPECT_TRUE(check_needed_libraries(blas, "x.so", Profile::hybrid).empty());
  // A look-alike of torch's own names is not torch's.
  EXPECT_FALSE(check_needed_libraries({"libtorch_evil.so", "libc10x.so"}, "x.so", Profile::strict).empty());
}

TEST(LinkCheck, SymbolFamilies) {
  auto rule_of = [](const std::string& sym, Profile p = Profile::strict) {
    const auto f = check_linked_symbols({sym}, "ext.so", p);
    return f.empty() ? std::string() : f[0].rule_id;
  };
  // The driver API beside the runtime (red team rt26's lead: a context of its own), run-time code.
  EXPECT_EQ(rule_of("cuCtxCreate_v2"), "dynamic_code");
  EXPECT_EQ(rule_of("cuModuleLoadData"), "dynamic_code");
  EXPECT_EQ(rule_of("cuLaunchKernel"), "dynamic_code");
  EXPECT_EQ(rule_of("nvrtcCompileProgram"), "dynamic_code");
  EXPECT_EQ(rule_of("cudaGetDriverEntryPoint"), "dynamic_code");
  EXPECT_EQ(rule_of("dlsym"), "dynamic_code");
  EXPECT_EQ(rule_of("PyEval_EvalCode"), "dynamic_code");
  EXPECT_EQ(rule_of("PyImport_ImportModuleLevel"), "dynamic_code");
  EXPECT_EQ(rule_of("PyImport_ExecCodeModule"), "dynamic_code");
  // pybind11's headers import these themselves (py::print imports sys: red team rt27's false
  // rejection); the source scan judges the candidate's own uses.
  EXPECT_EQ(rule_of("PyImport_ImportModule"), "");
  EXPECT_EQ(rule_of("PyImport_AddModuleRef"), "");
  EXPECT_EQ(rule_of("_ZN5torch3jit7compileERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"), "dynamic_code");
  // ... but tensor maps and queries are what an honest Hopper kernel uses.
  EXPECT_EQ(rule_of("cuTensorMapEncodeTiled"), "");
  EXPECT_EQ(rule_of("cuGetErrorString"), "");
  EXPECT_EQ(rule_of("cudaLaunchKernel"), "");
  EXPECT_EQ(rule_of("__cudaRegisterFunction"), "");
  // Library compute, by family.
  EXPECT_EQ(rule_of("cublasSgemm_v2"), "cpp_library_compute");
  EXPECT_EQ(rule_of("cublasLtMatmul"), "cpp_library_compute");
  EXPECT_EQ(rule_of("cudnnConvolutionForward"), "cpp_library_compute");
  EXPECT_EQ(rule_of("cblas_sgemm"), "cpp_library_compute");
  EXPECT_EQ(rule_of("dgemm_"), "cpp_library_compute");
  EXPECT_EQ(rule_of("dnnl_sgemm"), "cpp_library_compute");
  // Other spellings of the same routines (red team rt29), and AOTInductor's C shim; its
  // tensor-handle plumbing and look-alike innocent names are not compute.
  for (const char* s : {"SGEMM", "DGEMM_", "sgemm_64", "sgemm64_", "scipy_cblas_sgemm64_", "openblas_set_num_threads",
                        "scipy_sgemm_", "aoti_torch_cpu_mm_out", "aoti_torch_cuda_relu", "aoti_torch_call_dispatcher",
                        "torch_call_dispatcher"})
    EXPECT_EQ(rule_of(s), "cpp_library_compute") << s;
  for (const char* s : {"aoti_torch_get_data_ptr", "aoti_torch_delete_tensor_object", "aoti_torch_empty_strided",
                        "aoti_torch_dtype_float32", "omp_get_thread_num", "GOMP_parallel", "PyErr_SetString",
                        "PyLong_AsSsize_t", "strtod", "memcpy"})
    EXPECT_EQ(rule_of(s), "") << s;
  // ATen's kernels past the dispatcher; its CUDA helpers are allowed.
  EXPECT_EQ(rule_of("_ZN2at4cuda4reluERKNS_6TensorE"), "private_torch_internals");
  EXPECT_EQ(rule_of("_ZN2at3cpu4reluERKNS_6TensorE"), "private_torch_internals");
  EXPECT_EQ(rule_of("_ZN2at4cuda20getCurrentCUDAStreamEa"), "");
  // Hooks, graphs, persisting L2.
  EXPECT_EQ(rule_of("PyEval_SetProfile"), "introspection");
  EXPECT_EQ(rule_of("cuptiActivityDisable"), "introspection");
  EXPECT_EQ(rule_of("cudaGraphLaunch"), "streams_events_graphs");
  EXPECT_EQ(rule_of("cudaStreamSetAttribute"), "l2_persistence");
  // Files, threads and processes are the sandbox's, not the link check's: honest CUDA extensions
  // built on the H200 (gcc 13, session 17) import open, secure_getenv and syscall from the
  // toolchain's own code, which the first version of this check rejected (4 of 4 objects).
  for (const char* sandbox : {"open", "secure_getenv", "syscall", "pthread_create", "fopen64", "system"})
    EXPECT_EQ(rule_of(sandbox), "") << sandbox;
  // The C library's and the C++ runtime's ordinary calls.
  for (const char* ok : {"memcpy", "strlen", "malloc", "__cxa_throw", "expf", "cudaEventCreateWithFlags",
                         "cudaStreamWaitEvent", "PyObject_CallObject", "PyEval_GetBuiltins"})
    EXPECT_EQ(rule_of(ok), "") << ok;
  // Profiles: the kernelbench profile does not run the library rule, off runs nothing.
  EXPECT_EQ(rule_of("cublasSgemm_v2", Profile::kernelbench), "");
  EXPECT_EQ(rule_of("dlsym", Profile::off), "");
}

// at::_ops::<op>: every operator but the glue is compute. The glue list is the CPU op trace's
// (python/kgym_worker/integrity.py ATEN_GLUE): each of its operators, and its overloads, pass.
TEST(LinkCheck, AtenOpsAreComputeButTheOpTracesGlue) {
  std::ifstream f(fs::path(KGYM_TEST_DATA_DIR) / ".." / ".." / "python" / "kgym_worker" / "integrity.py");
  std::stringstream text;
  text << f.rdbuf();
  const std::string py = text.str();
  const size_t start = py.find("ATEN_GLUE = frozenset(\"\"\"");
  ASSERT_NE(start, std::string::npos);
  const size_t body = py.find('\n', start) + 1, end = py.find("\"\"\"", body);
  std::istringstream words(py.substr(body, end - body));
  auto ops_symbol = [](const std::string& op) {  // at::_ops::<op>::call()
    return "_ZN2at4_ops" + std::to_string(op.size()) + op + "4callEv";
  };
  int n = 0;
  for (std::string g; words >> g; ++n) {
    EXPECT_TRUE(check_linked_symbols({ops_symbol(g)}, "x.so", Profile::strict).empty()) << g;
    EXPECT_TRUE(check_linked_symbols({ops_symbol(g + "_memory_format")}, "x.so", Profile::strict).empty()) << g;
  }
  EXPECT_GT(n, 80);
  // (and the ops a glue name's prefix also begins: conj_physical; the backward ops, such as
  // unfold_backward, which sums overlapping windows)
  for (const char* op : {"relu", "clamp_min", "add_Scalar", "relu_", "threshold", "hardtanh", "where_self", "mm",
                         "conj_physical", "_conj_physical", "conj_physical_out", "unfold_backward", "select_backward"})
    EXPECT_EQ(rules(check_linked_symbols({ops_symbol(op)}, "x.so", Profile::strict)),
              std::vector<std::string>{"cpp_library_compute"}) << op;
}

TEST(LinkCheck, DemangleAndReadARealObject) {
  EXPECT_EQ(demangle("_ZN2at3cpu4reluERKNS_6TensorE"), "at::cpu::relu(at::Tensor const&)");
  EXPECT_EQ(demangle("sgemm_"), "sgemm_");
  // A declaration bound by an asm label: the source names `hidden`, the object imports sgemm_.
  const fs::path dir = fs::temp_directory_path() / ("kgym_link_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "t.cpp") << "extern \"C\" void hidden(float*) __asm__(\"sg\" \"emm_\");\n"
                                    "extern \"C\" void entry(float* x) { hidden(x); }\n";
  }
  const auto built = kgym::run_process({"g++", "-shared", "-fPIC", "-o", (dir / "t.so").string(), (dir / "t.cpp").string()},
                                       60000);
  ASSERT_TRUE(built.ok()) << built.err << built.error;
  std::string error;
  const auto symbols = undefined_symbols((dir / "t.so").string(), &error);
  ASSERT_TRUE(symbols) << error;
  EXPECT_NE(std::find(symbols->begin(), symbols->end(), "sgemm_"), symbols->end());
  EXPECT_EQ(rules(check_linked_symbols(*symbols, "t.so", Profile::strict)), std::vector<std::string>{"cpp_library_compute"});
  EXPECT_FALSE(undefined_symbols((dir / "t.cpp").string(), &error));  // not an object: nm fails, and says so
  EXPECT_FALSE(error.empty());

  // runner::candidate_objects: the file is listed; once this process maps it, it is `loaded`;
  // once deleted while mapped, `replaced`.
  auto find = [&](const std::vector<kgym::runner::CandidateObject>& objs) {
    for (const auto& o : objs)
      if (o.path.filename() == "t.so") return std::optional<kgym::runner::CandidateObject>(o);
    return std::optional<kgym::runner::CandidateObject>();
  };
  auto listed = find(kgym::runner::candidate_objects({dir}, ::getpid()));
  ASSERT_TRUE(listed);
  EXPECT_FALSE(listed->loaded);
  void* handle = ::dlopen((dir / "t.so").c_str(), RTLD_LAZY | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  listed = find(kgym::runner::candidate_objects({dir}, ::getpid()));
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->loaded);
  EXPECT_FALSE(listed->replaced);
  fs::remove(dir / "t.so");
  listed = find(kgym::runner::candidate_objects({dir}, ::getpid()));
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->replaced);
  ::dlclose(handle);
  fs::remove_all(dir);
}

}  // namespace

namespace {
// kgym's op watch lives in the candidate's process (python/kgym_worker/native/opwatch.cpp): its
// switch named in the candidate's C++ or imported by its extension is the harness's, not the
// candidate's (a candidate that turned it off would hide its ATen ops from the launch gate).
TEST(LinkCheck, TheOpWatchsSwitchIsTheHarnesss) {
  auto f = kgym::policy::check_linked_symbols({"kgym_opwatch_set", "malloc"}, "ext.so", kgym::policy::Profile::strict);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule_id, "timer_harness_patch");
  EXPECT_TRUE(kgym::policy::check_linked_symbols({"malloc"}, "ext.so", kgym::policy::Profile::strict).empty());
}
}  // namespace

// A C routine that torch's own libraries export is library compute unless it is torch's plumbing
// (red team rt35: of libtorch_cpu's ~23,000 MKL exports a list of spellings missed sgemm_batch
// and vsTanh).
TEST(LinkCheck, TorchsOwnCExportsAreLibraryComputeButItsPlumbingIsNot) {
  const std::set<std::string> exports = {"mystery_kernel_f32", "DftiCommitDescriptor", "aoti_torch_get_data_ptr",
                                         "THPVariableClass", "FLAGS_caffe2_log_level", "cpuinfo_initialize",
                                         "Sleef_expf8_u10", "_fini"};
  EXPECT_EQ(rules(check_linked_symbols({"mystery_kernel_f32"}, "x.so", Profile::strict, &exports)),
            std::vector<std::string>{"cpp_library_compute"});
  EXPECT_TRUE(check_linked_symbols({"mystery_kernel_f32"}, "x.so", Profile::strict).empty());  // without the set
  for (const char* ok : {"aoti_torch_get_data_ptr", "THPVariableClass", "FLAGS_caffe2_log_level", "cpuinfo_initialize",
                         "Sleef_expf8_u10", "_fini", "memcpy"})
    EXPECT_TRUE(check_linked_symbols({ok}, "x.so", Profile::strict, &exports).empty()) << ok;
}

// The same on the torch this machine has (python3's): every honest extension passes, rt35's
// MKL routines do not.
TEST(LinkCheck, TheRealTorchsExportsRejectNoHonestExtension) {
  const auto r = kgym::run_process(
      {"python3", "-c", "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))"}, 120000);
  std::string dir = r.out;
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
  if (!r.ok() || dir.empty()) GTEST_SKIP() << "python3 cannot import torch here";
  std::string error;
  const auto exports = torch_c_exports(dir, &error);
  ASSERT_TRUE(exports) << error;
  EXPECT_GT(exports->size(), 10000u);  // MKL alone
  EXPECT_TRUE(exports->count("sgemm_batch") && exports->count("vsTanh")) << "libtorch_cpu's MKL";
  for (const char* name : {"honest_cuda_rep", "kgym_cpu_relu_honest", "relu_cpp_ext", "rt26_honest_loop", "rt24_relu_plain",
                           "rt24_relu_rows", "rt25_own_ns2", "fr_openmp", "fr_parallel_for_dispatch", "fr_std_algo_cout",
                           "fr_pyprint", "rt28_a4_vec_map", "fr_unfold_view", "cudal1_softmax_cuda_vectorized_multiblock",
                           "cudal1_optimized_gelu_cuda", "cudal1_cosine_similarity_loss_cuda", "honest_cuda_guard",
                           "fr_rt35_conv_direct", "fr_rt35_gelu_vec", "fr_rt35_mm_omp", "fr_rt35_partial_sum",
                           "fr_rt35_softmax_dispatch", "fr_rt35_sum_narrow"})
    EXPECT_TRUE(check_linked_symbols(recorded(name), name, Profile::strict, exports).empty()) << name;
  // names no list spells: MKL's service and FFT entry points, a packed GEMM's Fortran alias
  for (const char* hack : {"vmlSetMode", "DftiComputeForward", "SGEMM_PACK", "mkl_sparse_s_mm"}) {
    if (exports->count(hack)) {
      EXPECT_EQ(rules(check_linked_symbols({hack}, "x.so", Profile::strict, exports)),
                std::vector<std::string>{"cpp_library_compute"}) << hack;
    }
  }
}
