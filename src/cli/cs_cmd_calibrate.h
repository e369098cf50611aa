/* collsim calibrate: fit the model's parameters to measured results
 * (cmd_calibrate.c). */
#ifndef CS_CMD_CALIBRATE_H
#define CS_CMD_CALIBRATE_H

int cs_cmd_calibrate(int argc, char **argv);

#endif
