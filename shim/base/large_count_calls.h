// MPI-4's large-count functions (MPI_Put_c, MPI_Pack_c, ...), which the
// shim calls, are not in MPI-3 libraries: MPICH 3.x and the vendor MPIs
// built on it keep the same libmpi.so.12 ABI but have no PMPI_*_c. A plain
// reference to one would stop the dynamic loader from loading
// librmashim.so there at all. So every TU that calls one includes this
// header, which makes the references weak: the loader resolves them to
// null where the library lacks them, and HasLargeCountCalls() says whether
// they can be called. Without them the shim keeps working with the int
// forms (datatype.cc packs in runs of at most INT_MAX bytes), and the
// large-count wrappers (wrap_large_count.cc), which only a program built
// against an MPI-4 library calls, give MPI_ERR_COUNT for counts beyond
// int. //tests/install:mpi3_symbols_test checks that no reference to an MPI-4
// function stays strong.
//
// RMASHIM_TEST_WITHOUT_MPI4=1 makes the shim act as if they were absent,
// so the int fallbacks run in tests on an MPI-4 library.
#ifndef RMASHIM_SHIM_BASE_LARGE_COUNT_CALLS_H_
#define RMASHIM_SHIM_BASE_LARGE_COUNT_CALLS_H_

#include <mpi.h>

#pragma weak PMPI_Put_c
#pragma weak PMPI_Get_c
#pragma weak PMPI_Rput_c
#pragma weak PMPI_Rget_c
#pragma weak PMPI_Accumulate_c
#pragma weak PMPI_Raccumulate_c
#pragma weak PMPI_Get_accumulate_c
#pragma weak PMPI_Rget_accumulate_c
#pragma weak PMPI_Pack_c
#pragma weak PMPI_Unpack_c
#pragma weak PMPI_Pack_size_c

namespace rmashim {

// Whether the MPI library has the large-count functions above (and
// RMASHIM_TEST_WITHOUT_MPI4 does not hide them). Decided once.
bool HasLargeCountCalls();

}  // namespace rmashim

#endif  // RMASHIM_SHIM_BASE_LARGE_COUNT_CALLS_H_
