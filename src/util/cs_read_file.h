/* Reading a user's input file whole, bounded: only a regular file, and no
 * more than a limit per kind of file, so that a wrong argument (/dev/zero,
 * a FIFO, a multi-gigabyte dump) is refused at once instead of filling the
 * memory or waiting forever. The limits are documented in the LIMITS
 * sections of collsim-topology(5), collsim-scenario(5),
 * collsim-calibrate(1) and collsim(1). */
#ifndef CS_READ_FILE_H
#define CS_READ_FILE_H

#include <glib.h>
#include <sys/types.h>

/* Topology files (collsim XML, NCCL dumps): 64 MiB is a cluster of about
 * 11000 DGX H100 nodes written by `collsim topo xml` (5.7 KB a node), which
 * already takes seconds and over a GiB to load; larger clusters are
 * described by a one-node file and --nodes. */
#define CS_READ_LIMIT_TOPOLOGY ((gsize)64 << 20)
/* Scenario, calibration parameter and manifest INI files: a few dozen
 * lines each. */
#define CS_READ_LIMIT_INI ((gsize)1 << 20)
/* Measured results: nccl-tests logs (text or JSON), collsim's result JSON,
 * NCCL's debug logs. A log of many runs with NCCL_DEBUG=INFO is tens of
 * MiB. */
#define CS_READ_LIMIT_LOG ((gsize)256 << 20)

/* Reads the regular file 'path' whole into *buf_p (NUL-terminated, g_free)
 * and its length into *len_p. Messages name the file as 'noun' ("file",
 * "scenario") and what was expected as 'expected' ("topology file", "INI
 * file"). Errors, one line each:
 *   PATH: cannot read the NOUN (REASON); expected a readable EXPECTED (CS_ERROR_IO)
 *   PATH: not a regular file; expected a/an EXPECTED                  (CS_ERROR_INPUT)
 *   PATH: larger than 64 MiB; expected a/an EXPECTED of at most 64 MiB (CS_ERROR_INPUT)
 * At most limit + 1 bytes are read, even from a file that grows. A FIFO is
 * opened without waiting for a writer. Outputs are set only on success. */
gboolean cs_read_file(const char *path, const char *noun, const char *expected, gsize limit, char **buf_p,
                      gsize *len_p, GError **err);

/* The path by which this process read the file (device, inode) with
 * cs_read_file, or NULL: outputs (cs_output.h) refuse to replace an input. */
const char *cs_read_file_input(dev_t dev, ino_t ino);
/* Counts 'path' (a regular file) as an input without reading it: a file
 * that another process of the command reads (sweep's workers). */
void cs_read_file_note_input(const char *path);
/* No longer counts 'path' as an input: one the command means to replace
 * (calibrate -o naming its own --calibration start file, refined in place). */
void cs_read_file_forget_input(const char *path);

#endif
