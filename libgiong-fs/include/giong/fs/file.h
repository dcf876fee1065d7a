/* SPDX-License-Identifier: MIT */
/*
 * giong/fs/file.h - open files: positional I/O, sync, metadata, size.
 *
 * A struct giong_file is an owned, opaque handle on one descriptor. It has no
 * cursor: every read and write names its offset (pread/pwrite semantics), so
 * many tasks may use one file at once, on any worker, with no locking. The
 * handle itself never changes after it is opened; it must not be closed while
 * another task still uses it.
 *
 * Offsets and lengths are int64_t whatever _FILE_OFFSET_BITS says; a negative
 * offset or length is -EINVAL. A single read or write moves at most
 * 0x7ffff000 bytes (Linux's MAX_RW_COUNT): larger requests come back short.
 *
 * Memory: a buffer or iovec array passed to a call is lent to the kernel
 * until the call returns (giong_io() parks the task until the operation's
 * completion, also when it is cancelled or times out), and is never written
 * after that.
 *
 * Page-cache fast path. Positional reads (giong_file_read_at(),
 * giong_file_readv_at(), and the reads inside giong_fs_read()) first try a
 * direct preadv2(2) with RWF_NOWAIT on the worker; only when the kernel
 * answers EAGAIN (some data is not in the page cache) does the read become
 * an SQE and the task park. RWF_NOWAIT never waits for the disk or for a
 * lock: the read is the same non-blocking attempt io_uring itself makes
 * inline when it issues a read SQE, without the ring round trip. Before it,
 * the call fails with -ECANCELED / -ETIMEDOUT exactly as giong_io() would for
 * a cancelled task or a passed deadline. A task whose reads all hit the
 * cache never parks, so after GIONG_FS_DIRECT_READS_PER_YIELD direct reads
 * in a row (or GIONG_FS_DIRECT_BYTES_PER_YIELD bytes) it calls giong_yield():
 * other tasks, timers and completions run, and the worker's clock (hence the
 * deadline check) moves on. Files that cannot take RWF_NOWAIT (tmpfs, /proc,
 * FUSE, pipes and FIFOs: -EOPNOTSUPP, -EINVAL or -ESPIPE) fall back to the
 * ring, and the file remembers it; files opened with O_DIRECT always use the
 * ring. Writes always use the ring. Opens (giong_file_open() and
 * giong_file_open_at() without O_CREAT or O_TRUNC, giong_dir_open(),
 * giong_fs_read()) likewise first try
 * a direct openat2(2) with RESOLVE_CACHED, which succeeds only when the path
 * lookup is in the kernel's cache (the attempt io_uring makes inline,
 * O_NONBLOCK for the attempt and taken off after unless asked for), and go
 * through the ring when it answers EAGAIN. Turn the fast path off per file
 * with giong_open_options.ring_only (the open and every read) or
 * giong_file_set_ring_only() (the reads), or for the whole process
 * (giong_fs_read() included) with GIONG_FS_READ=ring in the environment
 * (read once). See docs/fs.md.
 */
#ifndef GIONG_FS_FILE_H
#define GIONG_FS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_file;

/* The fast path yields after this many direct reads in a row by one task... */
#define GIONG_FS_DIRECT_READS_PER_YIELD 16
/* ...or once its direct reads in a row have moved this many bytes. */
#define GIONG_FS_DIRECT_BYTES_PER_YIELD (256u * 1024u)

/*
 * How to open a file: the meaning of open(2), with the combinations that
 * open(2) would accept but make no sense refused with -EINVAL (the rules of
 * Rust's std::fs::OpenOptions). Zero-initialise (or giong_open_options_init())
 * and set what you need:
 *
 *   read        O_RDONLY, or O_RDWR with write/append.
 *   write       O_WRONLY, or O_RDWR with read.
 *   append      O_APPEND (implies write access): every write goes to the end
 *               of the file, whatever offset is passed to *_at() (Linux's
 *               pwrite(2) does the same on an O_APPEND descriptor).
 *   create      O_CREAT: open the file, creating it if missing.
 *   create_new  O_CREAT | O_EXCL: create the file, -EEXIST if it exists
 *               (also for a dangling symbolic link). Overrides create and
 *               truncate.
 *   truncate    O_TRUNC: cut an existing file to 0 bytes.
 *   mode        permission bits for a created file (before the umask);
 *               0 means the default 0666.
 *   custom_flags extra open(2) flags OR'ed in (O_NOFOLLOW, O_NOATIME,
 *               O_DIRECT, O_SYNC, O_PATH, ...). O_CLOEXEC is always added.
 *   ring_only   not an open(2) flag: the open and every read of this file
 *               are SQEs (no direct openat2/RWF_NOWAIT attempt first; see
 *               "Page-cache fast path" above). For data you expect to be cold, or to batch many
 *               reads of many tasks into one io_uring_enter. Default false.
 *               giong_file_set_ring_only() changes it later.
 *   resolve     openat2(2)'s RESOLVE_* flags, as <linux/openat2.h> defines
 *               them: RESOLVE_BENEATH, RESOLVE_IN_ROOT, RESOLVE_NO_SYMLINKS,
 *               RESOLVE_NO_MAGICLINKS, RESOLVE_NO_XDEV; 0: none, the
 *               default. Non-zero makes the open an openat2(2) (see
 *               giong_file_open_at()). giong_open_options_flags() ignores it.
 *
 * -EINVAL: none of read/write/append; create, create_new or truncate without
 * write or append; truncate with append (unless create_new); custom_flags
 * holding O_ACCMODE, O_CREAT, O_EXCL, O_TRUNC or O_APPEND bits (those come
 * from the booleans); mode above 07777; and, when opening, resolve holding
 * any other bit (RESOLVE_CACHED included: giong adds it itself) or both
 * RESOLVE_BENEATH and RESOLVE_IN_ROOT.
 */
struct giong_open_options {
	bool read;
	bool write;
	bool append;
	bool create;
	bool create_new;
	bool truncate;
	bool ring_only; /* not open(2): the open and reads through the ring (see above) */
	unsigned mode;
	int custom_flags;
	unsigned resolve; /* openat2(2)'s RESOLVE_* (see above); 0: none */
};

/* giong_open_options_init() - all false, mode 0 (= 0666), no custom flags,
 * resolve 0.
 * Returns 0, or -EINVAL if @o is NULL. Does not suspend. */
GIONG_API int giong_open_options_init(struct giong_open_options *o);

/*
 * giong_open_options_flags() - the open(2) flags @o stands for, without
 * opening anything: O_CLOEXEC | access mode | creation flags | custom_flags.
 * Returns them (>= 0), or -EINVAL for a bad combination (see above).
 * Does not suspend.
 */
GIONG_API int giong_open_options_flags(const struct giong_open_options *o);

/*
 * giong_file_open() - open @path (borrowed; relative to the working
 * directory) as @opts (borrowed) says, with IORING_OP_OPENAT.
 * Returns 0 and an owned file in *@ret (close with giong_file_close()), or
 * -EINVAL (NULL argument, bad options), -ENOENT, -EEXIST (create_new),
 * -EISDIR (a directory with write access), -EACCES, ... as open(2) says.
 * Like open(2), a directory opened read-only succeeds; reading it returns
 * -EISDIR. A FIFO whose path lookup is in the kernel's cache (the usual
 * case) is opened without waiting for its other end, as with O_NONBLOCK:
 * write-only with no reader fails with -ENXIO, read-only returns at once
 * (its reads then wait for a writer's data). When the lookup needs the
 * kernel's worker threads (a cold cache, NFS, /proc/self/fd links) the open
 * waits for the other end like open(2) - the task parks; a deadline or a
 * cancel ends it with -ETIMEDOUT or -ECANCELED and leaks nothing, on every
 * kernel (the kernel worker's interrupted open ends in -EINTR on Linux 6.1
 * and in -ERESTARTSYS on later ones; core reports the cancel for both).
 * Open FIFOs read+write to never wait (or add O_NONBLOCK to custom_flags).
 * With a non-zero @opts->resolve it is giong_file_open_at(AT_FDCWD, ...).
 * May suspend.
 */
GIONG_API int giong_file_open(const char *path, const struct giong_open_options *opts,
			      struct giong_file **ret);

/*
 * giong_file_open_at() - open @path (borrowed) relative to the directory
 * descriptor @dirfd (borrowed; AT_FDCWD for the working directory; an
 * absolute @path ignores it unless resolve says otherwise) as @opts
 * (borrowed) says, always with openat2(2) and @opts->resolve applied: the
 * direct cached attempt with RESOLVE_CACHED | resolve (see "Page-cache fast
 * path" above; not for O_CREAT/O_TRUNC, nor with ring_only), then
 * IORING_OP_OPENAT2 with the same struct open_how. The kernel resolves the
 * path: with RESOLVE_BENEATH it refuses any path that leaves @dirfd - "..",
 * an absolute path, or a symbolic link (relative or absolute) whose target
 * is outside - with -EXDEV, whatever the caller checked before.
 * openat2(2) is stricter than open(2): unknown bits in custom_flags are
 * -EINVAL where giong_file_open() (resolve 0) would ignore them; mode is
 * passed only with O_CREAT or O_TMPFILE.
 * Returns 0 and an owned file in *@ret (close with giong_file_close()), or
 * -EINVAL (NULL @path, @opts or @ret; bad options; an unknown resolve bit,
 * RESOLVE_CACHED, or BENEATH with IN_ROOT), -EBADF (@dirfd not
 * a descriptor), -ENOTDIR (@dirfd not a directory, with a relative @path),
 * -EXDEV (RESOLVE_BENEATH: the path or a link in it leaves @dirfd;
 * RESOLVE_NO_XDEV: it crosses a mount), -ELOOP (RESOLVE_NO_SYMLINKS: a
 * symbolic link anywhere in the path, the last component included;
 * RESOLVE_NO_MAGICLINKS: a /proc magic link), -ENOSYS or -EINVAL (a kernel
 * without openat2, before 5.6), or any error of giong_file_open(). A FIFO
 * opens as with giong_file_open(); with O_NONBLOCK in custom_flags it never
 * waits for its other end, on any path (then giong_file_stat() tells a
 * FIFO, S_ISFIFO(mode), from a regular file). May suspend.
 */
GIONG_API int giong_file_open_at(int dirfd, const char *path, const struct giong_open_options *opts,
				 struct giong_file **ret);

/*
 * giong_file_create() - open @path write-only, creating it (mode 0666 before
 * the umask) or truncating it: .write, .create and .truncate.
 * Returns 0 and an owned file in *@ret (close with giong_file_close()), or
 * -errno as giong_file_open(). May suspend.
 */
GIONG_API int giong_file_create(const char *path, struct giong_file **ret);

/*
 * giong_file_from_fd() - wrap descriptor @fd (takes ownership: it is closed
 * by giong_file_close()). For stdin, pipes, or a descriptor made elsewhere.
 * Reads use the fast path unless @fd has O_DIRECT (fcntl(F_GETFL), once);
 * a descriptor switched to O_DIRECT later with fcntl(F_SETFL) must be made
 * ring_only with giong_file_set_ring_only().
 * Returns 0 and an owned file in *@ret, -EINVAL for a negative @fd or NULL
 * @ret, -ENOMEM (then @fd is left open and still the caller's).
 * Does not suspend.
 */
GIONG_API int giong_file_from_fd(int fd, struct giong_file **ret);

/*
 * giong_file_into_fd() - free the handle @f without closing its descriptor
 * (takes ownership of @f) and return the descriptor, now the caller's.
 * Returns -EINVAL for NULL. Does not suspend.
 */
GIONG_API int giong_file_into_fd(struct giong_file *f);

/*
 * giong_file_set_ring_only() - turn the page-cache fast path of @f off (@on
 * true: every read is an SQE) or back on (false; a file whose kernel refused
 * RWF_NOWAIT, or opened with O_DIRECT, keeps using the ring all the same).
 * The same as giong_open_options.ring_only, also for giong_file_from_fd().
 * Tasks reading @f meanwhile see the change at their next read.
 * Returns 0, or -EINVAL for NULL. Does not suspend.
 */
GIONG_API int giong_file_set_ring_only(struct giong_file *f, bool on);

/* giong_file_fd() - the descriptor of @f (borrowed: valid until @f is
 * closed), or -EINVAL for NULL. Does not suspend. */
GIONG_API int giong_file_fd(const struct giong_file *f);

/*
 * giong_file_close() - close @f's descriptor and free @f (takes ownership).
 * The descriptor is released exactly once, whatever this returns:
 * through the ring (IORING_OP_CLOSE) when possible; with a direct close(2)
 * outside a task, when the task is already cancelled, or when the kernel
 * reports that the ring close was cancelled before it ran. The task's
 * deadline is not applied to the close (a timed-out close would only have
 * to be redone with a blocking close(2)).
 * Returns 0, or the error close(2) reports (-EIO, -EINTR, ... : the
 * descriptor is gone all the same; never retry). NULL is a no-op returning 0.
 * May suspend.
 */
GIONG_API int giong_file_close(struct giong_file *f);

/*
 * giong_file_read_at() - read up to @len bytes at offset @off into @buf
 * (lent to the kernel until this returns). Does not move any cursor.
 * Returns the bytes read (0 at end of file or for @len 0), or -EINVAL (NULL
 * @f, NULL @buf with @len > 0, negative @off), -ECANCELED, -ETIMEDOUT,
 * -EISDIR, -EBADF (not opened for reading), ... If the task is cancelled or
 * its deadline passes while the read is in the kernel and the read
 * completed anyway, its count is returned and the data is in @buf.
 * On a regular file fewer than @len bytes (at most 0x7ffff000) means the end
 * of the file: as io_uring does, a read that found only part of its range in
 * the page cache reads on (through the ring) to the end of the request; if
 * the task is cancelled or times out then, the bytes already read are
 * returned. Tries the page cache directly first (see "Page-cache fast path"
 * above). On a pipe, FIFO or terminal, @off is ignored. May suspend (and,
 * on a cache hit, may yield).
 */
GIONG_API ssize_t giong_file_read_at(struct giong_file *f, void *buf, size_t len, int64_t off);

/*
 * giong_file_write_at() - write up to @len bytes of @buf (lent to the kernel
 * until this returns) at offset @off; with append, at the end of the file
 * whatever @off is. Returns the bytes written (possibly fewer than @len), or
 * -EINVAL (as read_at), -EBADF, -ENOSPC, -EFBIG, -ECANCELED, -ETIMEDOUT, ...
 * May suspend.
 */
GIONG_API ssize_t giong_file_write_at(struct giong_file *f, const void *buf, size_t len,
				      int64_t off);

/*
 * giong_file_write_all_at() - write all @len bytes of @buf at @off, looping
 * over short writes (with append, every piece goes to the end of the file).
 * Returns 0 once all is written, or -errno (-EIO if the kernel wrote nothing
 * for a non-empty request); after an error, part of the data may have been
 * written. May suspend.
 */
GIONG_API int giong_file_write_all_at(struct giong_file *f, const void *buf, size_t len,
				      int64_t off);

/*
 * giong_file_readv_at() / giong_file_writev_at() - scatter/gather versions
 * (preadv/pwritev). @iov (@iovcnt entries, 0..IOV_MAX) and the buffers it
 * points to are lent to the kernel until the call returns.
 * Returns bytes moved or -errno; -EINVAL for a NULL @iov with @iovcnt > 0,
 * @iovcnt < 0 or > IOV_MAX, a negative @off. readv_at reads as read_at does
 * (page-cache fast path first; short only at the end of a regular file).
 * May suspend.
 */
GIONG_API ssize_t giong_file_readv_at(struct giong_file *f, const struct iovec *iov, int iovcnt,
				      int64_t off);
GIONG_API ssize_t giong_file_writev_at(struct giong_file *f, const struct iovec *iov, int iovcnt,
				       int64_t off);

/*
 * giong_file_read() / giong_file_write() / giong_file_write_all() - stream
 * I/O at the descriptor's own position (offset -1 in the SQE): for stdin,
 * stdout, pipes, FIFOs and terminals, where there is no offset. On a regular
 * file they use and advance the shared file position, like read(2)/write(2).
 * Same buffer rules and returns as the *_at() versions. On a pipe or
 * terminal in O_NONBLOCK mode they always wait for data: if the ring answers
 * -EAGAIN there (older kernels do; 6.18 waits by itself), they wait with
 * giong_poll() and try again, where the *_at() versions return -EAGAIN.
 * May suspend.
 */
GIONG_API ssize_t giong_file_read(struct giong_file *f, void *buf, size_t len);
GIONG_API ssize_t giong_file_write(struct giong_file *f, const void *buf, size_t len);
GIONG_API int giong_file_write_all(struct giong_file *f, const void *buf, size_t len);

/* giong_file_sync_all() - fsync(2) through the ring (IORING_OP_FSYNC): data
 * and metadata reach the disk. Returns 0 or -errno. May suspend. */
GIONG_API int giong_file_sync_all(struct giong_file *f);

/* giong_file_sync_data() - fdatasync(2) through the ring
 * (IORING_FSYNC_DATASYNC). Returns 0 or -errno. May suspend. */
GIONG_API int giong_file_sync_data(struct giong_file *f);

/* Seconds and nanoseconds since the epoch. */
struct giong_timestamp {
	int64_t sec;
	uint32_t nsec;
};

/* Bits of giong_stat.mask: which optional fields the filesystem filled. */
enum {
	GIONG_STAT_BTIME = 1u << 0, /* btime (creation time) is valid */
};

/* Metadata of a file (from statx; the meaning of struct stat's fields). */
struct giong_stat {
	uint64_t size;   /* bytes (st_size) */
	uint64_t blocks; /* 512-byte blocks allocated (st_blocks) */
	uint64_t ino;    /* inode number */
	uint64_t dev;    /* device holding the file, as st_dev (makedev) */
	uint64_t rdev;   /* device it stands for, if special, as st_rdev */
	uint32_t mode;   /* type and permission bits, as st_mode (S_ISREG() ...) */
	uint32_t nlink;  /* hard links */
	uint32_t uid;
	uint32_t gid;
	uint32_t blksize; /* preferred I/O size */
	uint32_t mask;    /* GIONG_STAT_* */
	struct giong_timestamp atime, mtime, ctime, btime;
};

/*
 * giong_file_stat() - metadata of @f into *@st (caller storage), with
 * IORING_OP_STATX on the descriptor (AT_EMPTY_PATH). The kernel runs statx in
 * one of its worker threads (two context switches): it never blocks the
 * worker, but giong_file_len() is faster for the size alone.
 * Returns 0 or -errno (-EINVAL for NULL). May suspend.
 */
GIONG_API int giong_file_stat(struct giong_file *f, struct giong_stat *st);

/*
 * giong_file_len() - the size of @f in bytes. Uses fstat(2) directly, not
 * the ring: on a local filesystem it reads the in-memory inode and never
 * blocks, and costs one system call instead of a kernel worker round trip
 * (on NFS or FUSE it may wait for the server: use giong_file_stat() there).
 * Returns the size (>= 0) or -errno. Does not suspend.
 */
GIONG_API int64_t giong_file_len(struct giong_file *f);

/*
 * giong_file_set_len() - truncate or extend @f to @len bytes (ftruncate).
 * Through the ring (IORING_OP_FTRUNCATE) when the kernel has it (Linux 6.9+,
 * probed once per process); otherwise a direct ftruncate(2), which may block
 * the worker. Returns 0 or -errno (-EINVAL for a negative @len, -EBADF or
 * -EINVAL if not opened for writing). May suspend.
 */
GIONG_API int giong_file_set_len(struct giong_file *f, int64_t len);

/* giong_file_set_len_uses_ring() - 1 if giong_file_set_len() goes through the
 * ring on this kernel, 0 if it calls ftruncate(2). Does not suspend. */
GIONG_API int giong_file_set_len_uses_ring(void);

/*
 * giong_file_allocate() - fallocate(2) through the ring (IORING_OP_FALLOCATE):
 * reserve (@mode 0: and extend the size to cover) @len bytes at @off; @mode
 * takes FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, ... from <fcntl.h>.
 * Returns 0 or -errno (-EINVAL for a negative @off, @len <= 0 or NULL @f;
 * -EOPNOTSUPP where the filesystem cannot). May suspend.
 */
GIONG_API int giong_file_allocate(struct giong_file *f, int mode, int64_t off, int64_t len);

GIONG_END_DECLS

#endif /* GIONG_FS_FILE_H */
