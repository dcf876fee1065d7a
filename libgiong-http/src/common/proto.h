/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the one table through which the protocol-neutral layer reaches a
 * connection's protocol. Internal to libgiong-http.
 *
 * The request and the response (request.h) carry a pointer to the table and
 * to the protocol's state of the exchange (px); the public API in request.c
 * and response.c checks the handler's calls, keeps the neutral state (what
 * was started, ended, counted), and leaves the wire to these operations.
 * HTTP/1.1 (h1/) appends the bytes to the connection's batch as it goes: no
 * field is collected, nothing allocated per field. A second protocol may
 * collect the fields into an array and make frames at head_end().
 *
 * The calls are indirect only where a second protocol must differ, and a
 * handful per response (head_start, head_field per field, head_end, body),
 * never per byte.
 *
 * Not here, as they are the connection's whatever its protocol: the client's
 * address (request.c, from the PROXY header or the peer, kept on the
 * connection) and closing (res->close, read by the protocol at head_end and
 * after the exchange: HTTP/1.1 closes the connection, HTTP/2 would end only
 * the stream unless the connection must go).
 *
 * Which protocol a connection speaks is chosen once, by the server's
 * choose_protocol() (server.c), after the wrap (a TLS handshake) and before
 * its first request, or by HTTP/1.1 handing over at a prior-knowledge
 * preface (h1/conn.c).
 *
 * The table is public (<giong/http/protocol.h>): HTTP/1.1's (h1/) is one,
 * a protocol library's (libgiong-http2) another, with the calls it makes
 * back in common/protocol.c.
 */
#ifndef GIONG_HTTP_PROTO_H
#define GIONG_HTTP_PROTO_H

#include <giong/http/protocol.h>

#endif /* GIONG_HTTP_PROTO_H */
