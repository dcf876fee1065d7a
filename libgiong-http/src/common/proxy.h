/* SPDX-License-Identifier: MIT */
/*
 * proxy.h - the PROXY protocol header (HAProxy's proxy-protocol.txt, versions
 * 1 and 2) that a load balancer in front sends before the first request, so
 * that the server sees the real client's address. Internal to libgiong-http;
 * used only when the server's options ask for it (off by default: a client
 * could otherwise claim any address).
 *
 * Strict: v1 is "PROXY" SP ("TCP4" | "TCP6") SP src SP dst SP sport SP dport
 * CRLF with addresses in their canonical text and ports 0..65535 without
 * leading zeros, or "PROXY UNKNOWN" ... CRLF, the whole line at most 107
 * bytes; v2 is the 12-byte signature, version 2, command LOCAL or PROXY, an
 * address family of TCP over IPv4 or IPv6 (or UNSPEC), a length that holds
 * the addresses, and TLVs (skipped) up to GIONG__HTTP_PROXY_V2_MAX bytes.
 * Anything else is refused.
 */
#ifndef GIONG_HTTP_PROXY_H
#define GIONG_HTTP_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include <giong/net/addr.h>

/* The longest v1 line, CRLF included (the specification's bound). */
#define GIONG__HTTP_PROXY_V1_MAX 107
/* The longest v2 header accepted: 16 bytes and the addresses and TLVs. */
#define GIONG__HTTP_PROXY_V2_MAX 1024

/*
 * giong__http_proxy_parse() - the PROXY header at the start of buf[0..len).
 * Returns its length (> 0) with *@has_src telling whether it named a client
 * (false for v1 UNKNOWN and v2 LOCAL or UNSPEC: the connection's own peer
 * stands) and *@src that client's address and port; 0 when more bytes are
 * needed (a prefix of a valid header); -EBADMSG when it is not a valid header;
 * -EINVAL for NULL arguments.
 */
int giong__http_proxy_parse(const char *buf, size_t len, struct giong_addr *src, bool *has_src);

#endif /* GIONG_HTTP_PROXY_H */
