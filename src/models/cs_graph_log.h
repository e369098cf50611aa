/* What NCCL prints about its graphs and channels (NCCL_DEBUG=INFO with
 * NCCL_DEBUG_SUBSYS=INIT,GRAPH) and writes to NCCL_GRAPH_DUMP_FILE, made
 * from collsim's reproduction of the search (cs_decide_graph.c) and of
 * connect.cc / rings.cc / trees.cc / init.cc (NCCL v2.28.9), so that a
 * user can diff them against a real log. Used by `collsim topo graph`. */
#ifndef CS_GRAPH_LOG_H
#define CS_GRAPH_LOG_H

#include "models/cs_decide.h"

/* The INFO lines rank 'rank' prints (-1: every rank, in rank order),
 * each prefixed "node<N>:rank<R> [<cuda dev>] NCCL INFO ". In NCCL's
 * order for one rank: the ring, tree (and NVLS) graphs as
 * ncclTopoPrintGraph, the "comm" line, connectTrees' "Tree" lines,
 * ncclBuildRings' "Channel NN/MM :" lines (rank 0 only), the "Ring"
 * lines and the "Trees" line. GPUs are named GPU/<system>-<cuda dev>
 * where NCCL has the PCI bus id. NULL when 'rank' is out of range. */
char *cs_graph_log_info(const cs_comm_t *c, int rank);

/* The XML NCCL writes to NCCL_GRAPH_DUMP_FILE from rank 'rank'
 * (NCCL_GRAPH_DUMP_FILE_RANK, default 0): the graphs of its node as
 * searched, before the ranks agree. NULL when 'rank' is out of range. */
char *cs_graph_log_dump_xml(const cs_comm_t *c, int rank);

/* Final channel 'ch' (after ncclTopoPostset's duplications, of
 * cs_comm_info()->comm_nch) of rank 'rank': its ring neighbours and its
 * tree links, as NCCL sets channel->ring and channel->tree. down[] holds
 * up to 3 children, -1 where none. FALSE when out of range. */
gboolean cs_graph_log_channel(const cs_comm_t *c, int rank, int ch, int *prev, int *next,
                              int *up, int down[3]);

/* Every final channel's ring as NCCL's "Channel NN/MM : ..." lines list
 * them, from one build of the channels: next[ch * nranks + r] is the rank
 * after rank r on channel ch (cs_comm_info()->nranks ranks); *nch_p the
 * channels. Free with g_free. */
int *cs_graph_log_rings(const cs_comm_t *c, int *nch_p);

#endif
