/* Private to the packet engine and its tests. Model: docs/model-packet.md. */
#ifndef CS_ENGINE_PACKET_INT_H
#define CS_ENGINE_PACKET_INT_H

#include "sim/cs_engine.h"

/* The engine's ops table, registered in cs_engine.c. */
extern const cs_engine_ops_t cs_engine_packet;

#endif
