/* SPDX-License-Identifier: MIT */
/*
 * giong/net.h - libgiong-net: TCP, Unix and UDP sockets on the core
 * runtime, and struct giong_stream. Include this one header.
 */
#ifndef GIONG_NET_H
#define GIONG_NET_H

#include <giong/core.h>
#include <giong/net/addr.h>
#include <giong/net/ktls.h>
#include <giong/net/resolve.h>
#include <giong/net/stream.h>
#include <giong/net/tcp.h>
#include <giong/net/udp.h>
#include <giong/net/unix.h>

#endif /* GIONG_NET_H */
