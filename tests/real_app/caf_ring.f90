! Coarray Fortran ring (OpenCoarrays): for ROUNDS rounds every image puts a
! token and a 64-element payload into its right neighbour, synchronizes
! with its two neighbours only (sync images), and checks what its left
! neighbour wrote; then it reads its right neighbour's data back with a
! get. Known answer: after round r image i holds 1000*r + left(i).
! Prints "RESULT ok" (image 1) or the first mismatches and "RESULT wrong".
!   caf_ring [ROUNDS]   (default 50)
program caf_ring
  implicit none
  integer, parameter :: n = 64
  integer :: rounds
  integer :: token[*]
  double precision :: payload(n)[*]
  integer :: me, np, left, right, r, k, errors, got
  double precision :: back(n)

  rounds = argument(50)
  me = this_image()
  np = num_images()
  right = merge(1, me + 1, me == np)
  left = merge(np, me - 1, me == 1)
  errors = 0
  token = -1
  payload = 0
  sync all

  do r = 1, rounds
    token[right] = 1000 * r + me
    do k = 1, n
      payload(k)[right] = r * 100.0d0 + me + k / 128.0d0
    end do
    call sync_neighbours()
    if (token /= 1000 * r + left) call wrong('token', r, dble(token), dble(1000 * r + left))
    do k = 1, n
      if (payload(k) /= r * 100.0d0 + left + k / 128.0d0) &
        call wrong('payload', k, payload(k), r * 100.0d0 + left + k / 128.0d0)
    end do
    ! The right neighbour holds what I put: read it back (a get).
    got = token[right]
    if (got /= 1000 * r + me) call wrong('token get', r, dble(got), dble(1000 * r + me))
    back(:) = payload(:)[right]
    do k = 1, n
      if (back(k) /= r * 100.0d0 + me + k / 128.0d0) &
        call wrong('payload get', k, back(k), r * 100.0d0 + me + k / 128.0d0)
    end do
    ! Nobody writes round r+1 before everyone has read round r.
    call sync_neighbours()
  end do

  call co_sum(errors)
  if (me == 1) then
    print '(a,i0,a,i0,a)', 'ring: ', np, ' images, ', rounds, ' rounds'
    if (errors == 0) then
      print '(a)', 'RESULT ok'
    else
      print '(a,i0,a)', 'RESULT wrong (', errors, ' errors)'
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

  subroutine wrong(what, where, got, want)
    character(len=*), intent(in) :: what
    integer, intent(in) :: where
    double precision, intent(in) :: got, want
    errors = errors + 1
    if (errors <= 5) print '(a,i0,3a,i0,a,f0.6,a,f0.6)', 'image ', me, ' ', what, &
      ' at ', where, ': ', got, ' expected ', want
  end subroutine wrong
end program caf_ring
