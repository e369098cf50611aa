/* collsim doctor: inspect a machine (sysfs/procfs, live or captured) and the
 * NCCL_* settings; say which transport NCCL will use and what will hurt.
 * Exit status: 0 no error-level findings, 1 errors, 2 bad input. */
#ifndef CS_CMD_DOCTOR_H
#define CS_CMD_DOCTOR_H

int cs_cmd_doctor(int argc, char **argv);   /* cmd_doctor.c */

#endif
