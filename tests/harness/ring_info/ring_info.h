/* SPDX-License-Identifier: MIT */
/* ring_info.h - the parts of tests/harness/ring_info. */
#ifndef GIONG_TOOLS_RING_INFO_H
#define GIONG_TOOLS_RING_INFO_H

/* Print, for a few operations on files in @dir and on sockets, their result
 * and whether the kernel ran them inline or on an io-wq worker thread. */
void ring_info_punts(const char *dir);

#endif
