/* -report_devices of ex1, ex2 and bench/scaling/matmult_bench: one line per rank (in rank order)
   with the rank, its host and the CUDA device it uses, so that a run log shows the rank-to-GPU
   binding.

   PETSc chooses the device; this only reports it. PETSc 3.22 (src/sys/objects/device/impls/cupm/
   cupmdevice.cxx, Device<T>::initialize) takes -device_select_cuda <id> when given, otherwise
   PETSC_DECIDE: the rank in PETSC_COMM_WORLD modulo the number of visible devices (the ones left
   by CUDA_VISIBLE_DEVICES). The device is initialised lazily (-device_enable_cuda lazy, the
   default) at the first CUDA object: call this after a CUDA vector exists, and cudaGetDevice()
   is the device PETSc set. The PCI bus id is the physical one, so two ranks on the same GPU show
   the same bus id even when CUDA_VISIBLE_DEVICES renumbers the devices.

   Line (machine-readable, parsed by bench/tables/scaling_table.py):
     device_report rank=<r> ranks=<p> hostname=<h> cuda_device=<id> petsc_device=<id> visible_devices=<n> pci_bus_id=<bus> CUDA_VISIBLE_DEVICES=<value|unset>
   or, when the vector is not a CUDA vector (host types) or the build has no CUDA runtime:
     device_report rank=<r> ranks=<p> hostname=<h> host (no CUDA) vec_type=<type>
   CUDA part: PETSc built with CUDA and the program linked with the CUDA runtime (the CMake
   targets define PETSCSPMV_TUTORIALS_CUDART then). */
#ifndef PETSCSPMV_REPORT_DEVICES_H
#define PETSCSPMV_REPORT_DEVICES_H

#include <petscvec.h>
#include <stdlib.h>

#if defined(PETSC_HAVE_CUDA) && defined(PETSCSPMV_TUTORIALS_CUDART)
  #include <petscdevice.h>
  #include <cuda_runtime_api.h>
  #define PETSCSPMV_REPORT_CUDA 1
  #define ReportCheckCUDA(call) \
    do { \
      cudaError_t e_ = (call); \
      PetscCheck(e_ == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: CUDA error %d (%s)", #call, (int)e_, cudaGetErrorString(e_)); \
    } while (0)
#endif

/* Collective on v's communicator: prints one device_report line per rank (rank order). */
static PetscErrorCode ReportDevices(Vec v)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)v);
  PetscMPIInt rank, size;
  char        host[256];
  PetscBool   cudavec = PETSC_FALSE;
  VecType     vtype;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscGetHostName(host, sizeof(host)));
  PetscCall(VecGetType(v, &vtype));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cudavec, VECSEQCUDA, VECMPICUDA, VECCUDA, ""));
#if defined(PETSCSPMV_REPORT_CUDA)
  if (cudavec) {
    int                dev = -1, ndev = 0;
    char               bus[64] = "unknown";
    const char        *vis     = getenv("CUDA_VISIBLE_DEVICES");
    PetscDeviceContext dctx;
    PetscDevice        pdev;
    PetscInt           pid = -1;

    ReportCheckCUDA(cudaGetDevice(&dev));
    ReportCheckCUDA(cudaGetDeviceCount(&ndev));
    ReportCheckCUDA(cudaDeviceGetPCIBusId(bus, (int)sizeof(bus), dev));
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx)); /* PETSc's own view of the device */
    PetscCall(PetscDeviceContextGetDevice(dctx, &pdev));
    PetscCall(PetscDeviceGetDeviceId(pdev, &pid));
    PetscCall(PetscSynchronizedPrintf(comm, "device_report rank=%d ranks=%d hostname=%s cuda_device=%d petsc_device=%" PetscInt_FMT " visible_devices=%d pci_bus_id=%s CUDA_VISIBLE_DEVICES=%s\n", rank, size, host, dev, pid, ndev, bus, vis ? vis : "unset"));
  } else
#endif
    PetscCall(PetscSynchronizedPrintf(comm, "device_report rank=%d ranks=%d hostname=%s host (no CUDA) vec_type=%s\n", rank, size, host, vtype));
  PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
