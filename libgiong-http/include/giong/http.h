/* SPDX-License-Identifier: MIT */
/*
 * giong/http.h - libgiong-http: a strict HTTP/1.1 server and client over giong_stream.
 * Includes every header of the library (and <giong/net.h>).
 */
#ifndef GIONG_HTTP_H
#define GIONG_HTTP_H

#include <giong/net.h>

#include <giong/http/client.h>
#include <giong/http/limits.h>
#include <giong/http/method.h>
#include <giong/http/request.h>
#include <giong/http/response.h>
#include <giong/http/router.h>
#include <giong/http/server.h>
#include <giong/http/status.h>

#endif /* GIONG_HTTP_H */
