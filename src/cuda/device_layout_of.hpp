// DeviceLayoutOf<Host>::type: the device copy of a host layout (each format's device header
// specializes it), so that code generic over the formats (the CUDA shadow of the glue) finds
// the device struct whose upload/spmv/release overloads take it.
#pragma once

namespace pspmv
{
namespace cuda
{

template <class Host>
struct DeviceLayoutOf;

} // namespace cuda
} // namespace pspmv
