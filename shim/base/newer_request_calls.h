// Request calls newer than the MPI the shim is built against (MPICH
// 4.0.2's mpi.h): MPI-4.1's MPI_Request_get_status_all/any/some and
// MPICH 4.3's MPIX_Request_is_complete. A program built against a newer
// MPICH calls them with the shim's "completed at issue" request
// (kCompletedRequest, mpich_abi.h) in hand, which the library does not
// know, so the shim must answer for that request (wrap_request.cc). Their
// PMPI forms are declared here and referenced weakly, as
// large_count_calls.h does for MPI-4's: the loader resolves them to null
// in a library without them, where no program can call the wrappers (its
// mpi.h would not declare them either) and a direct call gets
// MPI_ERR_OTHER.
#ifndef RMASHIM_SHIM_BASE_NEWER_REQUEST_CALLS_H_
#define RMASHIM_SHIM_BASE_NEWER_REQUEST_CALLS_H_

#include <mpi.h>

extern "C" {
int PMPI_Request_get_status_all(int count, const MPI_Request requests[],
                                int* flag, MPI_Status statuses[]);
int PMPI_Request_get_status_any(int count, const MPI_Request requests[],
                                int* index, int* flag, MPI_Status* status);
int PMPI_Request_get_status_some(int incount, const MPI_Request requests[],
                                 int* outcount, int indices[],
                                 MPI_Status statuses[]);
int PMPIX_Request_is_complete(MPI_Request request);
}

#pragma weak PMPI_Request_get_status_all
#pragma weak PMPI_Request_get_status_any
#pragma weak PMPI_Request_get_status_some
#pragma weak PMPIX_Request_is_complete

#endif  // RMASHIM_SHIM_BASE_NEWER_REQUEST_CALLS_H_
