! Coarray Fortran halo exchange (OpenCoarrays): a 2-D Jacobi heat stencil on
! a (NX*images) x NY grid, periodic in the first dimension and split over
! images along it, so every halo is a strided row of a neighbour's array
! (a put with a stride of NX+2 elements) and the last image's right
! neighbour is image 1. Each step puts the two edge rows into the
! neighbours' ghost rows, synchronizes with the neighbours only, and
! updates. The same program also solves the whole grid serially on every
! image; the distributed result must equal the serial one bit for bit (the
! same operations in the same order).
! Prints "RESULT ok" (image 1) or the mismatches and "RESULT wrong".
!   caf_halo [STEPS]   (default 60)
program caf_halo
  implicit none
  integer, parameter :: nx = 12, ny = 24
  double precision, allocatable :: u(:,:)[:], new(:,:), g(:,:), gnew(:,:)
  integer :: me, np, left, right, rows, steps, i, j, s, errors
  double precision :: diff, maxdiff

  steps = argument(60)
  me = this_image()
  np = num_images()
  left = merge(np, me - 1, me == 1)
  right = merge(1, me + 1, me == np)
  rows = nx * np
  errors = 0
  allocate (u(0:nx + 1, 0:ny + 1)[*], new(nx, ny))
  allocate (g(0:rows + 1, 0:ny + 1), gnew(rows, ny))

  ! Serial reference on the whole grid: edge j = 0 held at 1, j = NY+1 at
  ! 0, periodic in i, a bumpy start inside.
  do j = 0, ny + 1
    do i = 1, rows
      g(i, j) = start_value(i, j)
    end do
  end do
  do s = 1, steps
    g(0, :) = g(rows, :)
    g(rows + 1, :) = g(1, :)
    do j = 1, ny
      do i = 1, rows
        gnew(i, j) = 0.25d0 * (g(i - 1, j) + g(i + 1, j) + g(i, j - 1) + g(i, j + 1))
      end do
    end do
    g(1:rows, 1:ny) = gnew
  end do

  ! Distributed: rows (me-1)*nx+1 .. me*nx, ghost rows 0 and nx+1 filled
  ! by the neighbours.
  u = 0
  do j = 0, ny + 1
    do i = 1, nx
      u(i, j) = start_value((me - 1) * nx + i, j)
    end do
  end do
  sync all
  do s = 1, steps
    u(nx + 1, 1:ny)[left] = u(1, 1:ny)
    u(0, 1:ny)[right] = u(nx, 1:ny)
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
    print '(a,i0,a,i0,a,i0,a,i0,a)', 'halo: ', np, ' images, ', rows, ' x ', ny, &
      ' periodic grid, ', steps, ' steps'
    print '(a,es10.3)', 'largest difference from the serial solve: ', maxdiff
    if (errors == 0) then
      print '(a)', 'RESULT ok'
    else
      print '(a,i0,a)', 'RESULT wrong (', errors, ' points differ)'
    end if
  end if
  ! Image 1 has printed before any image stops (error stop ends them all).
  sync all
  if (errors /= 0) error stop 1

contains

  integer function argument(default)
    integer, intent(in) :: default
    character(len=32) :: text
    argument = default
    if (command_argument_count() >= 1) then
      call get_command_argument(1, text)
      read (text, *) argument
    end if
  end function argument

  double precision function start_value(gi, j)
    integer, intent(in) :: gi, j
    if (j == 0) then
      start_value = 1
    else if (j == ny + 1) then
      start_value = 0
    else
      start_value = mod(gi * 7 + j * 3, 11) / 10.0d0
    end if
  end function start_value

  ! Synchronizes with the two neighbours only (one when there are two
  ! images: a list must not name an image twice).
  subroutine sync_neighbours()
    if (np == 1) then
      sync all
    else if (left == right) then
      sync images (right)
    else
      sync images ([left, right])
    end if
  end subroutine sync_neighbours
end program caf_halo
