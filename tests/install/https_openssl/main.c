// SPDX-License-Identifier: MIT
/* HTTPS with the openssl backend only: it must not need the other TLS library. */
#include <giong/tls/openssl.h>
#define BACKEND giong_tls_openssl
#include "../https_common.h"
