/* SPDX-License-Identifier: MIT */
/*
 * authority.h - whether bytes are an authority a server can take: the
 * `uri-host [ ":" port ]` of RFC 9110 7.2 (Host) and 4.2 (the authority of an
 * http or https URI, which has no userinfo: 4.2.4), with RFC 3986 3.2.2's
 * hosts. Protocol-neutral on purpose: HTTP/1.1 checks its Host field and the
 * authority of an absolute-form or authority-form target with it, and HTTP/2's
 * `:authority` is the same grammar. Internal to libgiong-http; no state, no
 * allocation.
 */
#ifndef GIONG_HTTP_AUTHORITY_H
#define GIONG_HTTP_AUTHORITY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * giong__http_authority_valid() - whether @p[0..n) is `host [ ":" port ]`:
 *  - host: an IP-literal in brackets (an IPv6address as RFC 3986 writes it,
 *    an embedded IPv4 tail included, or an IPvFuture "v1.x"; no zone
 *    identifier), or a reg-name of unreserved, pct-encoded ("%" and two
 *    hex digits) and sub-delims bytes, which an IPv4address also is. Never
 *    empty: RFC 9110 4.2.1 makes an http URI with an empty host invalid.
 *  - port: digits only, at most 65535 (a port past 16 bits names no TCP
 *    port, and http-parser refuses one in a target too); may be empty after
 *    the ":" (RFC 3986 3.2.3 allows it).
 * A space, a control byte, '@' (userinfo), '/', '?', '#', '"', '<', '>',
 * '\\', '^', '`', '{', '|', '}', a byte above 0x7E, an unbalanced bracket,
 * or a second ':' outside brackets is outside it. False for NULL or n == 0:
 * whether an empty value is acceptable is the caller's call (an empty Host
 * is, in HTTP/1.1).
 */
bool giong__http_authority_valid(const char *p, size_t n);

#endif /* GIONG_HTTP_AUTHORITY_H */
