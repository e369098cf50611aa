dnl MPI for `collsim sweep` (its points spread over the ranks of mpirun).
dnl --with-mpi[=yes|no], default "check": used when found. Flags from
dnl pkg-config (ompi-c: Open MPI as Debian packages it, libopenmpi-dev), else
dnl from the compiler wrapper (mpicc --showme:compile / --showme:link); then
dnl mpi.h must compile and MPI_Init link with them.
AC_DEFUN([CS_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi], [spread collsim sweep over MPI ranks (Open MPI; default: when found)])],
    [], [with_mpi=check])
  have_mpi=no
  mpi_note=""
  MPI_CFLAGS=""
  MPI_LIBS=""
  AS_IF([test "x$with_mpi" != xno], [
    PKG_CHECK_MODULES([MPI], [ompi-c], [mpi_note="(ompi-c)"], [
      AC_PATH_PROG([MPICC], [mpicc])
      AS_IF([test -n "$MPICC"], [
        MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null`
        MPI_LIBS=`$MPICC --showme:link 2>/dev/null`
        mpi_note="($MPICC)"
      ])
    ])
    AS_IF([test -n "$MPI_LIBS"], [
      cs_save_CPPFLAGS=$CPPFLAGS; cs_save_LIBS=$LIBS
      CPPFLAGS="$CPPFLAGS $MPI_CFLAGS"
      LIBS="$MPI_LIBS $LIBS"
      AC_MSG_CHECKING([whether MPI programs compile and link])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                                      [[int n = 0; MPI_Init(0, 0); MPI_Comm_size(MPI_COMM_WORLD, &n); MPI_Finalize();]])],
        [have_mpi=yes], [have_mpi=no; mpi_note="(mpi.h or libmpi unusable: install libopenmpi-dev)"])
      AC_MSG_RESULT([$have_mpi])
      CPPFLAGS=$cs_save_CPPFLAGS; LIBS=$cs_save_LIBS
    ], [mpi_note="(not found: install libopenmpi-dev and openmpi-bin)"])
  ], [mpi_note="(disabled)"])
  AS_IF([test "x$with_mpi" = xyes && test "x$have_mpi" = xno],
    [AC_MSG_ERROR([--with-mpi was given but no usable MPI was found (Debian: libopenmpi-dev, openmpi-bin)])])
  AS_IF([test "x$have_mpi" = xno], [MPI_CFLAGS=""; MPI_LIBS=""])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AC_PATH_PROG([MPIRUN], [mpirun])
  AM_CONDITIONAL([HAVE_MPI], [test "x$have_mpi" = xyes])
  AS_IF([test "x$have_mpi" = xyes], [AC_DEFINE([HAVE_MPI], [1], [collsim sweep spreads its points over MPI ranks])])
])
