! Coarray Fortran atomics (OpenCoarrays): every image adds to counters on
! image 1 and on the last image with atomic_add and atomic_fetch_add, ROUNDS
! times each, and takes ROUNDS tickets from a counter on the last image with
! an atomic_ref + atomic_cas retry loop (a fetch-and-add whose fetched value
! is known: OpenCoarrays 2.10.1's atomic_fetch_add never returns the old
! value to the caller, it fetches into a buffer of its own and frees it).
! Known answers: each counter ends at images * ROUNDS, and the tickets over
! all images are exactly 0 .. images*ROUNDS-1, each once (a lost update
! shows as a ticket taken twice). Then atomic_cas claims the slots of a
! table on image 1: each slot is claimed exactly once. atomic_define and
! atomic_ref set and read a flag on another image.
! Prints "RESULT ok" (image 1) or the mismatches and "RESULT wrong".
!   caf_atomics [ROUNDS]   (default 200)
program caf_atomics
  use, intrinsic :: iso_fortran_env, only: atomic_int_kind
  implicit none
  integer, parameter :: slots = 64, max_rounds = 10000
  integer :: rounds
  integer(atomic_int_kind) :: added[*], fetched[*], ticket[*], flag[*]
  integer(atomic_int_kind) :: table(slots)[*]
  integer :: tickets(max_rounds)[*]
  integer :: claims[*]
  integer :: me, np, last, k, i, img, errors, total, old_value
  integer(atomic_int_kind) :: old, seen, want
  logical, allocatable :: taken(:)

  rounds = min(argument(200), max_rounds)
  me = this_image()
  np = num_images()
  last = np
  errors = 0
  call atomic_define(added, 0)
  call atomic_define(fetched, 0)
  call atomic_define(ticket, 0)
  call atomic_define(flag, 0)
  do k = 1, slots
    call atomic_define(table(k), 0)
  end do
  claims = 0
  sync all

  do k = 1, rounds
    call atomic_add(added[1], 1)
    call atomic_fetch_add(fetched[last], 1, old)
    do
      call atomic_ref(want, ticket[last])
      call atomic_cas(ticket[last], old, want, want + 1)
      if (old == want) exit
    end do
    tickets(k) = old
  end do
  sync all

  if (me == 1) then
    call atomic_ref(seen, added)
    if (seen /= np * rounds) call wrong('atomic_add counter', seen, np * rounds)
  end if
  if (me == last) then
    call atomic_ref(seen, fetched)
    if (seen /= np * rounds) call wrong('atomic_fetch_add counter', seen, np * rounds)
    call atomic_ref(seen, ticket)
    if (seen /= np * rounds) call wrong('atomic_cas ticket counter', seen, np * rounds)
  end if
  if (me == 1) then
    allocate (taken(0:np * rounds - 1))
    taken = .false.
    do img = 1, np
      do k = 1, rounds
        old_value = tickets(k)[img]
        if (old_value < 0 .or. old_value >= np * rounds) then
          call wrong('ticket out of range', old_value, 0)
        else if (taken(old_value)) then
          call wrong('ticket fetched twice', old_value, 0)
        else
          taken(old_value) = .true.
        end if
      end do
    end do
    if (.not. all(taken)) call wrong('tickets never fetched', count(.not. taken), 0)
  end if

  ! Compare-and-swap: claim slots (0 -> my image number) until the table is
  ! full; every slot ends with exactly one owner.
  do i = 1, slots
    call atomic_cas(table(i)[1], old, 0, me)
    if (old == 0) claims = claims + 1
  end do
  sync all
  if (me == 1) then
    total = 0
    do img = 1, np
      total = total + claims[img]
    end do
    if (total /= slots) call wrong('slots claimed', total, slots)
    do i = 1, slots
      call atomic_ref(seen, table(i))
      if (seen < 1 .or. seen > np) call wrong('slot owner', seen, 1)
    end do
  end if

  ! atomic_define on another image, atomic_ref spinning on it.
  if (me == 1) call atomic_define(flag[last], 42)
  if (me == last) then
    do
      call atomic_ref(seen, flag)
      if (seen == 42) exit
    end do
  end if
  sync all

  call co_sum(errors)
  if (me == 1) then
    print '(a,i0,a,i0,a)', 'atomics: ', np, ' images, ', rounds, ' rounds'
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

  subroutine wrong(what, got, want)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got, want
    errors = errors + 1
    if (errors <= 5) print '(a,i0,3a,i0,a,i0)', 'image ', me, ': ', what, ': ', &
      got, ', expected ', want
  end subroutine wrong
end program caf_atomics
