#include "cusparse_direct.hpp"
#include "cusparse_sell.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <petscdevice_cuda.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace bench
{

namespace
{

struct DevMem {
  std::vector<void *>  ptrs;
  cusparseSpMatDescr_t A = nullptr;
  cusparseDnVecDescr_t X = nullptr, Y = nullptr;
  void                *alloc(size_t bytes)
  {
    void *p = nullptr;
    if (cudaMalloc(&p, bytes ? bytes : 16) != cudaSuccess) return nullptr;
    ptrs.push_back(p);
    return p;
  }
  ~DevMem()
  {
    if (A) cusparseDestroySpMat(A);
    if (X) cusparseDestroyDnVec(X);
    if (Y) cusparseDestroyDnVec(Y);
    for (void *p : ptrs) cudaFree(p);
  }
};

template <class T>
PetscErrorCode Upload(DevMem &d, const T *h, size_t n, T **out)
{
  PetscFunctionBegin;
  *out = static_cast<T *>(d.alloc(sizeof(T) * n));
  PetscCheck(*out, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc of %zu bytes failed", sizeof(T) * n);
  if (n) PetscCallCUDA(cudaMemcpy(*out, h, sizeof(T) * n, cudaMemcpyHostToDevice));
  PetscFunctionReturn(PETSC_SUCCESS);
}
template <class T>
PetscErrorCode Upload(DevMem &d, const std::vector<T> &h, T **out)
{
  return Upload(d, h.data(), h.size(), out);
}

} // namespace

PetscErrorCode RunCusparse(Bench &b, const HostCsr &H, const FormatSpec &f, const Reference &ref, Result &r)
{
  const bool   half = f.value_format == "fp16", sell = f.family == "cusparse_sell";
  const size_t vb = half ? 2 : 8;
  DevMem       d;
  const double t0 = now_s();

  PetscFunctionBegin;
  // fp16: scale by 2^-k so that values and results fit (|y_i| <= (|A||x|)_i <= scale)
  int k = 0;
  if (half) {
    double amax = 0;
    for (double v : H.values) amax = std::max(amax, std::fabs(v));
    const double m = std::max(amax, ref.scale);
    while (std::ldexp(m, -k) > 16384.0) ++k;
    if (k) r.info.emplace_back("scale", "values stored times 2^-" + std::to_string(k) + " (fp16 range); y rescaled on the host");
    r.error_bound = 3 * std::ldexp(1.0, -11) + double(H.max_row_length()) * std::ldexp(1.0, -24); // A, x, y rounded; FP32 sums
  }
  Sell S;
  if (sell) {
    BuildSell(H, 32, S);
    r.matrix_bytes = double(S.slots) * double(vb + 4) + double(S.nslices + 1) * (S.slots <= std::numeric_limits<int32_t>::max() ? 4 : 8);
    r.bytes_source = "slots*(value+4)+(slices+1)*offset, slice 32, padding column -1";
    r.stats        = {{"stored_slots", double(S.slots)}, {"padding_slots", double(S.slots - H.nnz())}, {"bytes_per_nnz", H.nnz() ? r.matrix_bytes / double(H.nnz()) : kNaN}};
  } else {
    r.matrix_bytes = double(H.nnz()) * double(vb + 4) + double(H.rows + 1) * 4;
    r.bytes_source = "nnz*(value+4)+(rows+1)*4";
  }
  if (b.cpu) {
    // no GPU: the same arrays through the host stand-in (checks the layout and the fp16 path)
    std::vector<double> y;
    r.info.emplace_back("types", half ? "host emulation (cpu mode): A=fp16,x=fp16,y=fp16,compute=fp32" : "host emulation (cpu mode): fp64");
    r.setup_s = now_s() - t0;
    r.bytes   = r.matrix_bytes + double(H.cols) * double(vb) + double(H.rows) * double(vb);
    auto op   = [&]() -> PetscErrorCode {
      EmulateCusparse(H, sell ? &S : nullptr, half, k, ref.x, y);
      return PETSC_SUCCESS;
    };
    PetscCall(TimeOp(b, op, r));
    ComputeError(ref, y.data(), y.size(), r);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // values to the device: FP64 as they are, FP16 rounded after the 2^-k scaling
  auto upload_vals = [&](const double *src, size_t n, void **out) -> PetscErrorCode {
    PetscFunctionBegin;
    if (half) {
      std::unique_ptr<__half[]> v16(new __half[n ? n : 1]);
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < n; ++i) v16[i] = __double2half(std::ldexp(src[i], -k));
      PetscCall(Upload(d, v16.get(), n, reinterpret_cast<__half **>(out)));
    } else PetscCall(Upload(d, src, n, reinterpret_cast<double **>(out)));
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  void *dvals = nullptr;
  if (!sell) {
    int32_t *drp, *dci;
    PetscCall(Upload(d, H.rowptr, &drp));
    PetscCall(Upload(d, H.colidx, &dci));
    PetscCall(upload_vals(H.values.data(), H.values.size(), &dvals));
    PetscCallCUSPARSE(cusparseCreateCsr(&d.A, H.rows, H.cols, H.nnz(), drp, dci, dvals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, half ? CUDA_R_16F : CUDA_R_64F));
  } else {
    void               *doff;
    cusparseIndexType_t offtype = CUSPARSE_INDEX_32I;
    if (S.slots <= std::numeric_limits<int32_t>::max()) {
      std::vector<int32_t> off32(S.off.begin(), S.off.end());
      PetscCall(Upload(d, off32, reinterpret_cast<int32_t **>(&doff)));
    } else {
      offtype = CUSPARSE_INDEX_64I;
      PetscCall(Upload(d, S.off, reinterpret_cast<int64_t **>(&doff)));
    }
    int32_t *dcol;
    PetscCall(Upload(d, S.col.get(), size_t(S.slots), &dcol));
    S.col.reset();
    PetscCall(upload_vals(S.val.get(), size_t(S.slots), &dvals));
    S.val.reset();
    PetscCallCUSPARSE(cusparseCreateSlicedEll(&d.A, H.rows, H.cols, H.nnz(), S.slots, S.C, doff, dcol, dvals, offtype, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, half ? CUDA_R_16F : CUDA_R_64F));
  }

  // vectors
  void *dx, *dy;
  if (half) {
    std::vector<__half> xh(ref.x.size());
    for (size_t i = 0; i < xh.size(); ++i) xh[i] = __double2half(ref.x[i]);
    PetscCall(Upload(d, xh, reinterpret_cast<__half **>(&dx)));
  } else PetscCall(Upload(d, ref.x, reinterpret_cast<double **>(&dx)));
  dy = d.alloc(sizeof(double) * size_t(std::max(H.rows, 1))); // big enough for any y type
  PetscCheck(dy, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc of y failed");
  PetscCallCUSPARSE(cusparseCreateDnVec(&d.X, H.cols, dx, half ? CUDA_R_16F : CUDA_R_64F));

  // fp16: A and x in FP16, compute FP32; y FP16 if cuSPARSE takes it, else FP32
  const cudaDataType      compute = half ? CUDA_R_32F : CUDA_R_64F;
  const cusparseSpMVAlg_t alg     = sell ? CUSPARSE_SPMV_SELL_ALG1 : CUSPARSE_SPMV_CSR_ALG1;
  const double            alpha64 = 1.0, beta64 = 0.0;
  const float             alpha32 = 1.0f, beta32 = 0.0f;
  const void             *alpha = half ? (const void *)&alpha32 : (const void *)&alpha64, *beta = half ? (const void *)&beta32 : (const void *)&beta64;
  size_t                  bufsize = 0;
  void                   *dbuf    = nullptr;
  cudaDataType            ytype   = half ? CUDA_R_16F : CUDA_R_64F;
  std::string             tried;
  // a combination counts once bufferSize, preprocess (where offered) and one product accept it
  for (;;) {
    cusparseStatus_t st    = cusparseCreateDnVec(&d.Y, H.rows, dy, ytype);
    std::string      stage = "cusparseCreateDnVec";
    if (st == CUSPARSE_STATUS_SUCCESS) {
      stage = "cusparseSpMV_bufferSize";
      st    = cusparseSpMV_bufferSize(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, &bufsize);
    }
    if (st == CUSPARSE_STATUS_SUCCESS && bufsize) {
      dbuf = d.alloc(bufsize);
      PetscCheck(dbuf, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc of the cuSPARSE buffer (%zu bytes) failed", bufsize);
    }
    if (st == CUSPARSE_STATUS_SUCCESS) {
      const cusparseStatus_t pp = cusparseSpMV_preprocess(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, dbuf);
      if (pp != CUSPARSE_STATUS_SUCCESS) r.info.emplace_back("preprocess", cusparseGetErrorString(pp));
      stage = "cusparseSpMV";
      st    = cusparseSpMV(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, dbuf);
    }
    if (st == CUSPARSE_STATUS_SUCCESS) break;
    tried += std::string(tried.empty() ? "" : "; ") + "y " + (ytype == CUDA_R_16F ? "fp16" : ytype == CUDA_R_32F ? "fp32" : "fp64") + ": " + stage + " said " + cusparseGetErrorString(st);
    if (d.Y) cusparseDestroyDnVec(d.Y);
    d.Y = nullptr;
    PetscCheck(half && ytype == CUDA_R_16F, PETSC_COMM_SELF, PETSC_ERR_LIB, "cuSPARSE refused the combination (%s)", tried.c_str());
    ytype = CUDA_R_32F; // documented mixed precision: A and x FP16, y FP32, compute FP32
  }
  const size_t yb = ytype == CUDA_R_16F ? 2 : (ytype == CUDA_R_32F ? 4 : 8);
  r.info.emplace_back("types", std::string("A=") + (half ? "fp16" : "fp64") + ",x=" + (half ? "fp16" : "fp64") + ",y=" + (yb == 2 ? "fp16" : yb == 4 ? "fp32" : "fp64") + ",compute=" + (half ? "fp32" : "fp64"));
  r.info.emplace_back("algorithm", sell ? "CUSPARSE_SPMV_SELL_ALG1" : "CUSPARSE_SPMV_CSR_ALG1");
  if (!tried.empty()) r.info.emplace_back("refused", tried);
  PetscCallCUDA(cudaDeviceSynchronize());
  r.setup_s = now_s() - t0;
  r.bytes   = r.matrix_bytes + double(H.cols) * double(vb) + double(H.rows) * double(yb);

  auto op = [&]() -> PetscErrorCode {
    PetscCallCUSPARSE(cusparseSpMV(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, dbuf));
    return PETSC_SUCCESS;
  };
  PetscCall(TimeOp(b, op, r));

  // correctness on a poisoned y (0xFF bytes are NaN in every float type)
  PetscCallCUDA(cudaMemsetAsync(dy, 0xFF, sizeof(double) * size_t(H.rows), b.stream));
  PetscCall(op());
  PetscCallCUDA(cudaDeviceSynchronize());
  std::vector<double> y(size_t(H.rows));
  if (yb == 8) PetscCallCUDA(cudaMemcpy(y.data(), dy, 8 * y.size(), cudaMemcpyDeviceToHost));
  else if (yb == 4) {
    std::vector<float> t(y.size());
    PetscCallCUDA(cudaMemcpy(t.data(), dy, 4 * t.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < y.size(); ++i) y[i] = std::ldexp(double(t[i]), k);
  } else {
    std::vector<__half> t(y.size());
    PetscCallCUDA(cudaMemcpy(t.data(), dy, 2 * t.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < y.size(); ++i) y[i] = std::ldexp(double(__half2float(t[i])), k);
  }
  ComputeError(ref, y.data(), y.size(), r);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace bench
