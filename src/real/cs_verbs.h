/* `collsim real --verbs`: RDMA write bandwidth and latency between two
 * hosts over RC queue pairs (a perftest-style size sweep), and a replay of a
 * scenario's inter-node ring traffic, so that the NIC and fabric part of a
 * prediction can be checked without GPUs. Built only when rdma-core is found
 * (HAVE_VERBS); the caller guards its call with #ifdef HAVE_VERBS. */
#ifndef CS_VERBS_H
#define CS_VERBS_H

/* Parses its own options (one GOptionContext) and runs. 'argv[0]' names the
 * command for messages (e.g. "collsim real"); the rest are the options the
 * user gave, with or without "--verbs" (accepted and ignored here). It
 * understands the scenario and topology flags of `collsim run` that it needs
 * for the replay (--scenario, --preset/--nodes, --coll, --sizes, ...).
 *   server: --server [--port P]
 *   client: --client HOST [--port P]
 * Returns the exit status: 0 success, 1 the run failed (no RDMA device, the
 * peer went away, a verbs call failed), 2 bad input (one line on stderr). */
int cs_verbs_main(int argc, char **argv);

#endif
