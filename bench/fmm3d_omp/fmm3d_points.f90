! FMM3D's Helmholtz FMM (OpenMP) on the point set `fmm_matmult -points DIR` writes:
!
!   fmm3d_points DIR REPEATS EPS [EPS ...]
!
! For each eps, hfmm3d_t_c_p (charges) and, where DIR/dipoles.bin exists, hfmm3d_t_cd_p (charges
! and dipoles d_j n_j) at the targets; one Markdown row each: the relative 2-norm error on the
! sampled targets against fmm_matmult's direct sums and the wall time of the call (its tree and
! set-up included, as FMM3D has no separate set-up), the minimum over REPEATS calls.
!
! Files (little-endian, 0-based indices; bench/fmm3d_compare.py reads the first two):
!   points.bin        int64 ns, nt; float64 k; ns*3 sources; ns complex charges; nt*3 targets
!   reference.bin     int64 m; m int64 target indices; m complex potentials (charges)
!   dipoles.bin       int64 ns; ns*3 unit normals; ns complex dipole strengths
!   reference_cd.bin  as reference.bin, for charges + dipoles
program fmm3d_points
  use omp_lib
  implicit none
  integer, parameter :: dp = kind(1d0)
  real(dp), parameter :: pi = 3.141592653589793238_dp
  character(4096) :: dir, arg
  integer(8) :: ns, nt, m, ier, j
  real(dp) :: k, eps, scale
  real(dp), allocatable :: sources(:, :), targets(:, :), normals(:, :)
  complex(dp), allocatable :: charges(:), strengths(:), dipvec(:, :), pot(:)
  complex(dp), allocatable :: reference(:), reference_cd(:)
  integer(8), allocatable :: sample(:)
  integer :: repeats, a
  logical :: dipoles

  if (command_argument_count() < 3) stop 'usage: fmm3d_points DIR REPEATS EPS [EPS ...]'
  call get_command_argument(1, dir)
  call get_command_argument(2, arg)
  read (arg, *) repeats

  open (10, file=trim(dir)//'/points.bin', access='stream', form='unformatted', status='old')
  read (10) ns, nt, k
  allocate (sources(3, ns), charges(ns), targets(3, nt), pot(nt))
  read (10) sources, charges, targets
  close (10)
  call read_reference(trim(dir)//'/reference.bin', sample, reference)
  m = size(sample)

  inquire (file=trim(dir)//'/dipoles.bin', exist=dipoles)
  if (dipoles) then
    allocate (normals(3, ns), strengths(ns), dipvec(3, ns))
    open (10, file=trim(dir)//'/dipoles.bin', access='stream', form='unformatted', status='old')
    read (10) j
    if (j /= ns) stop 'dipoles.bin: wrong source count'
    read (10) normals, strengths
    close (10)
    ! fmm_matmult's dipole term is d_j dG/dn_y = (d_j n_j) . grad_y G: FMM3D's dipvec.
    do j = 1, ns
      dipvec(:, j) = strengths(j)*normals(:, j)
    end do
    call read_reference(trim(dir)//'/reference_cd.bin', sample, reference_cd)
  end if

  scale = kernel_scale(k)
  write (*, '(a,i0,a,i0,a,g0.6,a,i0,a,g0.6,a,i0,a,i0)') 'fmm3d_points: ns ', ns, ' nt ', nt, &
    ' k ', k, ' sample ', m, ' scale ', scale, ' repeats ', repeats, ' threads ', omp_get_max_threads()
  write (*, '(a)') '', '| eps | sum | error | time s | threads |', '|---|---|---|---|---|'
  do a = 3, command_argument_count()
    call get_command_argument(a, arg)
    read (arg, *) eps
    call run(trim(arg), .false.)
    if (dipoles) call run(trim(arg), .true.)
  end do

contains

  ! One row: label is eps as given.
  subroutine run(label, with_dipoles)
    character(*), intent(in) :: label
    logical, intent(in) :: with_dipoles
    real(dp) :: best, start, error
    character(12) :: seconds
    integer :: r
    best = huge(1d0)
    do r = 1, repeats
      start = omp_get_wtime()
      if (with_dipoles) then
        call hfmm3d_t_cd_p(eps, cmplx(k, 0, dp), ns, sources, charges, dipvec, nt, targets, pot, ier)
      else
        call hfmm3d_t_c_p(eps, cmplx(k, 0, dp), ns, sources, charges, nt, targets, pot, ier)
      end if
      best = min(best, omp_get_wtime() - start)
      if (ier /= 0) write (*, '(a,i0)') 'warning: hfmm3d ier = ', ier
    end do
    if (with_dipoles) then
      error = relative_error(pot(sample + 1)*scale, reference_cd)
    else
      error = relative_error(pot(sample + 1)*scale, reference)
    end if
    write (seconds, '(f12.3)') best
    write (*, '(5a,es9.2,3a,i0,a)') '| ', label, ' | ', trim(merge('charges+dipoles', 'charges        ', &
      with_dipoles)), ' | ', error, ' | ', trim(adjustl(seconds)), ' | ', omp_get_max_threads(), ' |'
    flush (6)
  end subroutine run

  subroutine read_reference(path, index, values)
    character(*), intent(in) :: path
    integer(8), allocatable, intent(out) :: index(:)
    complex(dp), allocatable, intent(out) :: values(:)
    integer(8) :: count
    open (11, file=path, access='stream', form='unformatted', status='old')
    read (11) count
    allocate (index(count), values(count))
    read (11) index, values
    close (11)
  end subroutine read_reference

  real(dp) function relative_error(values, exact)
    complex(dp), intent(in) :: values(:), exact(:)
    relative_error = sqrt(sum(abs(values - exact)**2)/sum(abs(exact)**2))
  end function relative_error

  ! The factor taking FMM3D's potential to fmm_matmult's G = exp(ikr) / (4 pi r): 1 where FMM3D
  ! includes the 1/(4 pi) (2.x), 1/(4 pi) where it does not (1.x). A source at the origin and a
  ! target at (0.6, 0.8, 0), r = 1, through both hfmm3d_t_cd_p and the direct h3ddirectcdp: the
  ! charge gives G, the dipole v = (1, 0, 0) gives v . grad_y G = exp(ik) (ik - 1) (-0.6) / (4 pi)
  ! (with FMM3D's sign convention as documented, -v . grad_x); anything else stops the run.
  real(dp) function kernel_scale(k)
    real(dp), intent(in) :: k
    real(dp) :: y(3, 1) = 0, x(3, 1) = reshape([0.6_dp, 0.8_dp, 0.0_dp], [3, 1])
    complex(dp) :: q(1), v(3, 1), g, dg, fmm(1), direct(1)
    integer(8) :: ier1
    g = exp(cmplx(0, k, dp))/(4*pi)
    dg = g*cmplx(-1, k, dp)*(-0.6_dp)
    q = 1
    v = 0
    call hfmm3d_t_cd_p(1d-14, cmplx(k, 0, dp), 1_8, y, q, v, 1_8, x, fmm, ier1)
    kernel_scale = abs(g/fmm(1))
    if (abs(kernel_scale - 1) > 1d-8 .and. abs(kernel_scale*4*pi - 1) > 1d-8) &
      stop 'unexpected FMM3D charge normalisation'
    q = 0
    v(:, 1) = [1, 0, 0]
    call hfmm3d_t_cd_p(1d-14, cmplx(k, 0, dp), 1_8, y, q, v, 1_8, x, fmm, ier1)
    direct = 0
    call h3ddirectcdp(1_8, cmplx(k, 0, dp), y, q, v, 1_8, x, 1_8, direct, 1d-14)
    if (abs(fmm(1)*kernel_scale - dg) > 1d-10*abs(dg)) stop 'FMM3D dipole sign or scale differs'
    if (abs(direct(1)*kernel_scale - dg) > 1d-10*abs(dg)) stop 'h3ddirectcdp dipole differs'
  end function kernel_scale

end program fmm3d_points
