/* SPDX-License-Identifier: MIT */
/*
 * giong/net/ktls.h - kernel TLS (Linux's `tls` module) on a TCP socket stream: after a
 * TLS library's handshake, the kernel makes (and reads) the records of one direction
 * itself, with the keys the library gives it. For libgiong-tls (docs/tls.md), which
 * calls these once its backend has exported the keys; a program rarely needs them.
 *
 * Once the send direction is in the kernel, what is written to the socket stream is
 * plaintext that leaves as records: writes, sends and splices (a file body spliced
 * into the socket is encrypted on the way). Kernel TLS takes no MSG_WAITALL, so a
 * write may come back short (giong_stream_write_all() and giong_stream_send_start()
 * still send all of it).
 *
 * Once the receive direction is in the kernel, the socket stream's receives give the
 * plaintext of the peer's data records. At a record of another type (an alert such as
 * close_notify, a TLS 1.3 NewSessionTicket or KeyUpdate) a receive or read answers
 * -EIO after the data before it: giong_stream_ktls_recv_record() then reads that record
 * and its type, and receiving goes on. A record that does not open (a wrong key, or
 * one after the peer changed keys on a kernel that cannot follow: before Linux 6.14)
 * fails every receive with -EBADMSG.
 *
 * Kernels: TLS 1.2 send 4.13, receive 4.17, TLS 1.3 and AES-256-GCM 5.1,
 * ChaCha20-Poly1305 5.11. A kernel built without CONFIG_TLS, or without its module
 * loaded (`modprobe tls`; at boot: `echo tls > /etc/modules-load.d/tls.conf`), answers
 * -ENOENT: the caller goes on in user space.
 */
#ifndef GIONG_NET_KTLS_H
#define GIONG_NET_KTLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <giong/core/api.h>
#include <giong/net/stream.h>

GIONG_BEGIN_DECLS

/* A direction of the connection's records. */
enum giong_ktls_dir {
	GIONG_KTLS_TX = 1, /* the records this side sends */
	GIONG_KTLS_RX = 2, /* the records the peer sends */
};

/*
 * giong_ktls_probe() - whether this kernel takes TLS on a TCP socket: TCP_ULP "tls" on a
 * loopback connection made and closed for the question (plain system calls, no worker
 * needed; as root the kernel may load the module to answer). Returns 0 when it does, else
 * the -errno of the first call that failed (-ENOENT: no `tls` module, or a kernel without
 * CONFIG_TLS). Any thread.
 */
GIONG_API int giong_ktls_probe(void);

/*
 * giong_stream_ktls_start() - hand direction @dir of the TCP socket beneath @s (the first
 * socket stream down the stack) to kernel TLS, from its next record on.
 * @info, @len: that direction's struct tls12_crypto_info_aes_gcm_128 (_256,
 *              _chacha20_poly1305) of <linux/tls.h>: version, cipher, key, IV, salt and
 *              the next record's sequence number; copied into the kernel (the caller
 *              wipes its copy).
 * The caller chooses the moment: a record boundary, with nothing of that direction held
 * by the TLS library. TX: no write or send of @s may be in flight. RX: every byte the
 * socket received so far must be the library's; this call stops the socket's receive
 * ahead (it may park for the kernel to confirm) and refuses with -EAGAIN when bytes
 * came in meanwhile or were queued: give them to the library and ask again.
 * Returns 0, or -errno with the socket as it was (usable in user space):
 *  -ENOENT / -ENOPROTOOPT: no kernel TLS here (no `tls` module, or a kernel without it);
 *  -EINVAL / -ENOENT from the kernel for a version or cipher it does not take (the
 *          socket then stays a plain TCP socket: TLS in user space goes on);
 *  -EBUSY: a write or send in flight (TX); -EAGAIN: received bytes not yet read (RX);
 *  -EALREADY: that direction is in the kernel already;
 *  -EOPNOTSUPP: a socket in the worker's direct table on a kernel that cannot give it
 *          a descriptor (giong_stream_fd_install());
 *  -ENOTSUP: no TCP socket beneath; -EINVAL: NULL @s or @info, a bad @dir or @len;
 *  -ETIMEDOUT / -ECANCELED: the wait for the receive to stop (RX; nothing changed);
 *  -EBUSY (RX): no room in the ring for the receive's cancel (nothing changed);
 *  -EBADF: the stream was closed meanwhile;
 *  GIONG_ENOTWORKER / -EPERM: not the socket's worker.
 * May suspend. Owner worker only.
 */
GIONG_API int giong_stream_ktls_start(struct giong_stream *s, enum giong_ktls_dir dir,
				      const void *info, size_t len);

/*
 * giong_stream_ktls_send_record() - send @len bytes (at most 16,384) at @buf as one TLS
 * record of content type @type (21: an alert, such as close_notify {1, 0}) through the
 * kernel TLS of the socket beneath @s, after the stream's writes in flight. The bytes
 * are lent to the kernel until it returns. Returns @len, or -errno: -EINVAL (NULL @s,
 * @buf with @len, @len over 16,384, @type 23 (application data: write it instead)),
 * -ENOTCONN (the send direction is not in the kernel), -ENOTSUP (no socket beneath), or
 * the kernel's (-EPIPE). May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_stream_ktls_send_record(struct giong_stream *s, uint8_t type,
						const void *buf, size_t len);

/*
 * giong_stream_ktls_send_record_nowait() - giong_stream_ktls_send_record() for a path that
 * cannot park (a close): one sendmsg(2) with MSG_DONTWAIT, now, only when no write or send
 * of the stream is in flight. Returns @len, or -errno: the above, -EBUSY (a write in flight),
 * -EAGAIN (the socket's buffer is full): the record is then not sent. Never suspends.
 */
GIONG_API ssize_t giong_stream_ktls_send_record_nowait(struct giong_stream *s, uint8_t type,
						       const void *buf, size_t len);

/*
 * giong_stream_ktls_recv_record() - read the record of another type than data that
 * the kernel TLS of the socket beneath @s holds next (a receive answered -EIO): at
 * most @len bytes of its plaintext into @buf (the rest of a longer record stays for
 * the next call; 16,384 takes any), its content type into *@type (21 alert, 22
 * handshake). The stream's receives go on after it. @buf is lent to the kernel until
 * the call returns. Returns the count, 0 at the end of the stream, or -errno:
 * -EINVAL (NULL argument, @len 0), -ENOTCONN (the receive direction is not in the
 * kernel), -EAGAIN (no receive answered -EIO: no such record is known to be next, or
 * data is still queued before it), -ENOTSUP (no socket beneath), -EBADMSG (the record
 * does not open; for good), -ETIMEDOUT / -ECANCELED (nothing taken), -EBUSY (no room in
 * the ring), -EBADF (closed meanwhile), the kernel's. May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_stream_ktls_recv_record(struct giong_stream *s, uint8_t *type, void *buf,
						size_t len);

GIONG_END_DECLS

#endif /* GIONG_NET_KTLS_H */
