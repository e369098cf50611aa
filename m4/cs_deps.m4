dnl Optional dependencies. Each takes --with-X[=DIR|yes|no]; the default is
dnl "check": used when found. Asked for explicitly and missing: configure fails.

AC_DEFUN([CS_CHECK_SIMGRID], [
  AC_ARG_WITH([simgrid],
    [AS_HELP_STRING([--with-simgrid], [SimGrid cross-check engine (default: when found)])],
    [], [with_simgrid=check])
  have_simgrid=no
  simgrid_note=""
  AS_IF([test "x$with_simgrid" != xno], [
    PKG_CHECK_MODULES([SIMGRID], [simgrid >= 3.32], [have_simgrid=yes],
      [have_simgrid=no; simgrid_note="(not found: install libsimgrid-dev)"])
  ], [simgrid_note="(disabled)"])
  AS_IF([test "x$with_simgrid" = xyes && test "x$have_simgrid" = xno],
    [AC_MSG_ERROR([--with-simgrid was given but SimGrid >= 3.32 was not found (Debian: libsimgrid-dev)])])
  AM_CONDITIONAL([HAVE_SIMGRID], [test "x$have_simgrid" = xyes])
  AS_IF([test "x$have_simgrid" = xyes], [AC_DEFINE([HAVE_SIMGRID], [1], [SimGrid engine available])
    simgrid_note="(a module collsim loads for --model simgrid: collsim-simgrid.so)"])
])

AC_DEFUN([CS_CHECK_VERBS], [
  AC_ARG_WITH([verbs],
    [AS_HELP_STRING([--with-verbs], [rdma-core verbs runner and environment inspection (default: when found)])],
    [], [with_verbs=check])
  have_verbs=no
  verbs_note=""
  AS_IF([test "x$with_verbs" != xno], [
    PKG_CHECK_MODULES([VERBS], [libibverbs], [have_verbs=yes],
      [have_verbs=no; verbs_note="(not found: install libibverbs-dev)"])
  ], [verbs_note="(disabled)"])
  AS_IF([test "x$with_verbs" = xyes && test "x$have_verbs" = xno],
    [AC_MSG_ERROR([--with-verbs was given but libibverbs was not found (Debian: libibverbs-dev)])])
  AM_CONDITIONAL([HAVE_VERBS], [test "x$have_verbs" = xyes])
  AS_IF([test "x$have_verbs" = xyes], [AC_DEFINE([HAVE_VERBS], [1], [verbs available])])
])

dnl CUDA: headers and libcudart. The real backend is plain C on cuda_runtime.h;
dnl no nvcc is needed.
AC_DEFUN([CS_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [CUDA toolkit prefix (default: /usr/local/cuda when found)])],
    [], [with_cuda=check])
  have_cuda=no
  cuda_note=""
  CUDA_CPPFLAGS=""
  CUDA_LDFLAGS=""
  CUDA_LIBS=""
  AS_CASE([$with_cuda],
    [no], [cuda_note="(disabled)"],
    [yes|check], [cuda_dir=/usr/local/cuda],
    [cuda_dir=$with_cuda])
  AS_IF([test "x$with_cuda" != xno], [
    cs_save_CPPFLAGS=$CPPFLAGS; cs_save_LDFLAGS=$LDFLAGS; cs_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS -I$cuda_dir/include"
    LDFLAGS="$LDFLAGS -L$cuda_dir/lib64 -L$cuda_dir/lib"
    AC_CHECK_HEADER([cuda_runtime_api.h], [
      AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [have_cuda=yes])], [])
    CPPFLAGS=$cs_save_CPPFLAGS; LDFLAGS=$cs_save_LDFLAGS; LIBS=$cs_save_LIBS
    AS_IF([test "x$have_cuda" = xyes], [
      CUDA_CPPFLAGS="-I$cuda_dir/include"
      CUDA_LDFLAGS="-L$cuda_dir/lib64 -L$cuda_dir/lib -Wl,-rpath,$cuda_dir/lib64"
      CUDA_LIBS="-lcudart"
      cuda_note="($cuda_dir)"
    ], [cuda_note="(not found under $cuda_dir; CUDA is not in Debian: real backend left out)"])
  ])
  AS_IF([test "x$with_cuda" != xno && test "x$with_cuda" != xcheck && test "x$have_cuda" = xno],
    [AC_MSG_ERROR([--with-cuda was given but cuda_runtime_api.h and libcudart were not found under $cuda_dir])])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
])

dnl NCCL: nccl.h and libnccl, by default under the CUDA prefix.
AC_DEFUN([CS_CHECK_NCCL], [
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@], [NCCL prefix (default: the CUDA prefix, when found)])],
    [], [with_nccl=check])
  have_nccl=no
  nccl_note=""
  NCCL_CPPFLAGS=""
  NCCL_LDFLAGS=""
  NCCL_LIBS=""
  AS_CASE([$with_nccl],
    [no], [nccl_note="(disabled)"],
    [yes|check], [nccl_dir=${cuda_dir:-/usr/local/cuda}],
    [nccl_dir=$with_nccl])
  AS_IF([test "x$with_nccl" != xno && test "x$have_cuda" = xyes], [
    cs_save_CPPFLAGS=$CPPFLAGS; cs_save_LDFLAGS=$LDFLAGS; cs_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS -I$nccl_dir/include"
    LDFLAGS="$LDFLAGS $CUDA_LDFLAGS -L$nccl_dir/lib64 -L$nccl_dir/lib"
    AC_CHECK_HEADER([nccl.h], [
      AC_CHECK_LIB([nccl], [ncclCommInitRank], [have_nccl=yes], [], [-lcudart])], [])
    CPPFLAGS=$cs_save_CPPFLAGS; LDFLAGS=$cs_save_LDFLAGS; LIBS=$cs_save_LIBS
    AS_IF([test "x$have_nccl" = xyes], [
      NCCL_CPPFLAGS="-I$nccl_dir/include"
      NCCL_LDFLAGS="-L$nccl_dir/lib64 -L$nccl_dir/lib -Wl,-rpath,$nccl_dir/lib64 -Wl,-rpath,$nccl_dir/lib"
      NCCL_LIBS="-lnccl"
      nccl_note="($nccl_dir)"
    ], [nccl_note="(not found under $nccl_dir)"])
  ], [AS_IF([test "x$with_nccl" != xno], [nccl_note="(needs CUDA)"])])
  AS_IF([test "x$with_nccl" != xno && test "x$with_nccl" != xcheck && test "x$have_nccl" = xno],
    [AC_MSG_ERROR([--with-nccl was given but nccl.h and libnccl were not found under $nccl_dir (and CUDA is required)])])
  AC_SUBST([NCCL_CPPFLAGS])
  AC_SUBST([NCCL_LDFLAGS])
  AC_SUBST([NCCL_LIBS])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$have_nccl" = xyes])
])
