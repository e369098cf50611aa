/* Output files named on the command line (--json, --csv, --trace, --svg,
 * topo -o, doctor --topology) and standard output: written so that they
 * never clobber what they should not.
 *
 * - A symlink is followed to its target; the link stays.
 * - A regular file (or one not there yet) is written to a temporary file
 *   beside its target ("TARGET.XXXXXX") and renamed over it: readers see
 *   the old file or the whole new one. An existing file keeps its mode
 *   (and, as root, its owner); a new one gets 0666 less the umask.
 * - Anything else (a character device such as /dev/null, a FIFO) and
 *   /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N are written in
 *   place, never replaced.
 * - The same file named for two outputs of one command is refused.
 * - SIGINT, SIGTERM or SIGHUP during the write (where the signal would
 *   end the process) removes the temporary files first; one arriving
 *   while the files are renamed waits until the last rename.
 *
 * Errors: before a run (cs_output_check) an unusable path or a repeated
 * file is bad input (CS_ERROR_IO, exit 2); a write that fails afterwards
 * is CS_ERROR_RESOURCE (exit 3). Messages: "PATH: cannot write the file
 * (REASON); expected a writable path". */
#ifndef CS_OUTPUT_H
#define CS_OUTPUT_H

#include <glib.h>

/* Before a long computation: every path can be written now (its directory
 * exists and takes a file, it is not a directory) and no two name the
 * same file (after symlinks; the same device and inode). names[i]
 * ("collsim: --json", "s.ini:5") says where paths[i] came from, for the
 * message about a repeated file: "collsim: --csv: x.json is the same file
 * as --json's; ..."; names may be NULL. Leaves nothing. */
gboolean cs_output_check(int n, const char *const *paths, const char *const *names, GError **err);

/* Writes n outputs, all or none as far as a device or FIFO allows: every
 * temporary file is written first, then the in-place outputs, then the
 * renames. lens: each one's length, or NULL (NUL-terminated texts). */
gboolean cs_output_write(int n, const char *const *paths, const char *const *data, const gsize *lens,
                         GError **err);

/* One output; len < 0: NUL-terminated. */
gboolean cs_output_write_one(const char *path, const char *data, gssize len, GError **err);

/* Writes to stdout and flushes it; on failure sets CS_ERROR_RESOURCE
 * "collsim: standard output: REASON". */
gboolean cs_output_stdout(const char *data, gsize len, GError **err);

/* Flushes stdout and reports an earlier failed write to it (ferror),
 * as cs_output_stdout. For the end of main and streaming loops. */
gboolean cs_output_stdout_flush(GError **err);

#endif
