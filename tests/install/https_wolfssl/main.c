// SPDX-License-Identifier: MIT
/* HTTPS with the wolfssl backend only: it must not need the other TLS library. */
#include <giong/tls/wolfssl.h>
#define BACKEND giong_tls_wolfssl
#include "../https_common.h"
