/* collsim real: measure a scenario with real NCCL (cmd_real.c). */
#ifndef CS_CMD_REAL_H
#define CS_CMD_REAL_H

int cs_cmd_real(int argc, char **argv);

#endif
