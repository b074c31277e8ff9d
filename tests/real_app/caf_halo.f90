! Coarray Fortran halo exchange (OpenCoarrays): a 2-D Jacobi heat stencil on
! a (NX*images) x NY grid split over images along the first dimension, so
! every halo is a strided row of the neighbour's array (put with a stride of
! NX+2 elements). Each step puts the two edge rows into the neighbours'
! ghost rows, synchronizes with the neighbours only, and updates. The same
! program also solves the whole grid serially on every image; the
! distributed result must equal the serial one bit for bit (the same
! operations in the same order).
! Prints "RESULT ok" (image 1) or the mismatches and "RESULT wrong".
program caf_halo
  implicit none
  integer, parameter :: nx = 12, ny = 24, steps = 60
  double precision, allocatable :: u(:,:)[:], new(:,:), g(:,:), gnew(:,:)
  integer :: me, np, i, j, s, gi, errors
  double precision :: diff, maxdiff

  me = this_image()
  np = num_images()
  errors = 0
  allocate (u(0:nx + 1, 0:ny + 1)[*], new(nx, ny))
  allocate (g(0:nx * np + 1, 0:ny + 1), gnew(nx * np, ny))

  ! Serial reference on the whole grid: left edge held at 1, the other edges
  ! at 0, a bumpy start inside.
  call initial(g, nx * np)
  do s = 1, steps
    do j = 1, ny
      do i = 1, nx * np
        gnew(i, j) = 0.25d0 * (g(i - 1, j) + g(i + 1, j) + g(i, j - 1) + g(i, j + 1))
      end do
    end do
    g(1:nx * np, 1:ny) = gnew
  end do

  ! Distributed: rows (me-1)*nx+1 .. me*nx of the global grid, ghost rows 0
  ! and nx+1 filled by the neighbours (or the fixed edge on the ends).
  u = 0
  do j = 0, ny + 1
    do i = 0, nx + 1
      gi = (me - 1) * nx + i
      u(i, j) = start_value(gi, j, nx * np)
    end do
  end do
  sync all
  do s = 1, steps
    if (me > 1) u(nx + 1, 1:ny)[me - 1] = u(1, 1:ny)
    if (me < np) u(0, 1:ny)[me + 1] = u(nx, 1:ny)
    call sync_neighbours()
    do j = 1, ny
      do i = 1, nx
        new(i, j) = 0.25d0 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))
      end do
    end do
    u(1:nx, 1:ny) = new
    ! The neighbours have read my ghost rows before I overwrite theirs.
    call sync_neighbours()
  end do

  maxdiff = 0
  do j = 1, ny
    do i = 1, nx
      diff = abs(u(i, j) - g((me - 1) * nx + i, j))
      if (diff /= 0) then
        errors = errors + 1
        if (errors <= 5) print '(a,i0,a,i0,a,i0,a,es24.16,a,es24.16)', 'image ', me, &
          ': point ', (me - 1) * nx + i, ',', j, ' is ', u(i, j), ' serial ', &
          g((me - 1) * nx + i, j)
      end if
      maxdiff = max(maxdiff, diff)
    end do
  end do
  call co_sum(errors)
  call co_max(maxdiff)
  if (me == 1) then
    print '(a,i0,a,i0,a,i0,a,i0,a)', 'halo: ', np, ' images, ', nx * np, ' x ', ny, &
      ' grid, ', steps, ' steps'
    print '(a,es10.3)', 'largest difference from the serial solve: ', maxdiff
    if (errors == 0) then
      print '(a)', 'RESULT ok'
    else
      print '(a,i0,a)', 'RESULT wrong (', errors, ' points differ)'
    end if
  end if
  if (errors /= 0) error stop 1

contains

  double precision function start_value(gi, j, rows)
    integer, intent(in) :: gi, j, rows
    if (gi == 0) then
      start_value = 1
    else if (gi > rows .or. j == 0 .or. j == ny + 1) then
      start_value = 0
    else
      start_value = mod(gi * 7 + j * 3, 11) / 10.0d0
    end if
  end function start_value

  subroutine initial(grid, rows)
    integer, intent(in) :: rows
    double precision, intent(out) :: grid(0:rows + 1, 0:ny + 1)
    integer :: a, b
    do b = 0, ny + 1
      do a = 0, rows + 1
        grid(a, b) = start_value(a, b, rows)
      end do
    end do
  end subroutine initial

  subroutine sync_neighbours()
    if (np == 1) return
    if (me == 1) then
      sync images (2)
    else if (me == np) then
      sync images (np - 1)
    else
      sync images ([me - 1, me + 1])
    end if
  end subroutine sync_neighbours
end program caf_halo
