#!/bin/bash
# e2e.sh SERVE_BIN [BACKEND...] - giong-serve end to end: the program started on a temporary
# directory it serves (files, listings, hostile names, symbolic links, a FIFO, a 1 GiB sparse
# file, precompressed siblings) and asked through curl and raw sockets (bash's /dev/tcp):
# methods, path safety, redirects, listings, content types, validators, conditionals, ranges,
# files changed under its descriptor cache, --no-listing, --cache-control, --log, --metrics,
# 500 concurrent clients (no descriptor leaked), start-up errors, SIGTERM. Then, once per
# BACKEND (wolfssl, openssl), the same over HTTPS with the certificates of
# tests/tls/make-certs.sh and with --self-signed (the fingerprint it prints is the one it
# presents). No BACKEND: the HTTPS part is skipped.
#
# Each check prints one "ok: ..." line, or "FAIL: ..." lines with the reply; at the end of a
# failed run the servers' logs; the status is 1 then. E2E_FAIL_FAST=1 stops at the first
# failure. Skips (77) only without curl. Ports are tried from a pseudo-random base until the
# server listens; every wait is bounded; servers are stopped by their PID.
set -u
export LC_ALL=C
[ $# -ge 1 ] || {
	echo "usage: $0 SERVE_BIN [BACKEND...]" >&2
	exit 2
}
command -v curl >/dev/null || {
	echo "SKIP: curl is not installed"
	exit 77
}
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
shift
backends=("$@")
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ -x "$bin" ] || {
	echo "FAIL: $bin is not an executable"
	exit 1
}
work=$(mktemp -d)
R=$work/replies
mkdir -p "$R"
# shellcheck source=tests/serve/e2e_lib.sh
. "$here/e2e_lib.sh"

bg_pids=() # background clients to stop at the end
cleanup() {
	local p
	kill_servers
	for p in "${bg_pids[@]}"; do
		kill "$p" 2>/dev/null
		{ wait "$p"; } 2>/dev/null
	done
	if [ "$failures" != 0 ]; then
		print_logs
		echo "e2e: $failures check(s) failed"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------------------------------
# The tree. root is DIR; a secret lies next to it (in its parent) and in outside/, which
# nothing served may ever show.
root=$work/root
secret="TOP-SECRET-$$-$RANDOM$RANDOM"
printf '%s\n' "$secret" >"$work/secret.txt"
mkdir -p "$work/outside"
printf '%s\n' "$secret" >"$work/outside/secret.txt"
mkdir -p "$root"/{sub,site,hostile,links,special,mut,load,.git,.well-known}
cd "$root" || exit 1
printf 'Hello, world\n' >hello.txt
touch -d '2021-03-04 05:06:07 UTC' hello.txt
lm_hello=$(date -u -r hello.txt '+%a, %d %b %Y %H:%M:%S GMT')
printf '<!doctype html><title>t</title>\n' >t.html
printf 'text\n' >t.txt
printf 'body { color: red }\n' >t.css
printf 'console.log(1);\n' >t.js
printf '{"a": 1}\n' >t.json
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' >t.png
printf 'unknown\n' >t.nosuchext
: >empty.txt
printf '0123456789abcdefghij' >r.bin
printf 'conditional\n' >cond.txt
touch -d '2022-05-06 07:08:09 UTC' cond.txt
for i in $(seq 1 200); do printf 'line %d of a text that compresses well\n' "$i"; done >a.txt
gzip -k -n -9 a.txt
printf 'not really brotli \x00\x01\x02\xff the bytes just have to come back\n' >a.txt.br
cp a.txt c.txt
gzip -k -n -9 c.txt
head -c 2097152 /dev/urandom >mid.bin
truncate -s 1G big.bin
printf 'THE-END\n' | dd of=big.bin bs=1 seek=$((1073741824 - 8)) conv=notrunc 2>/dev/null
printf 'percent file\n' >'a%41.txt'
printf 'decoded twice!\n' >aA.txt
printf 'in sub\n' >sub/in.txt
printf 'hidden in sub\n' >sub/.hidden
printf '<p>the index</p>\n' >site/index.html
printf 'hidden\n' >.hidden
printf 'SECRET_ENV=1\n' >.env
printf '[core]\n\tbare = false\n' >.git/config
printf 'well known\n' >.well-known/x.txt
printf 'log probe\n' >log-probe.txt
hostile=('a"b.txt' "it's.txt" '<script>alert(1).html' '<img src=x onerror=alert(1)>.txt'
	'with space.txt' $'\xff\xfe.txt' 'a&b.txt' '100%.txt' 'q?x#y.txt')
for i in "${!hostile[@]}"; do
	printf 'hostile file %d\n' "$i" >"hostile/${hostile[$i]}"
done
ln -s ../hello.txt links/in.txt
ln -s ../sub links/indir
ln -s ../../secret.txt links/out.txt
ln -s "$work/secret.txt" links/abs-out.txt
ln -s ../../outside links/outdir
mkfifo special/fifo
have_sock=0
if command -v python3 >/dev/null &&
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
		special/sock 2>/dev/null; then
	have_sock=1
fi
have_dev=0
mknod special/null c 1 3 2>/dev/null && have_dev=1
sizes=(1 100 1000 4096 10000 20000 50000 65536 100000 200000)
for s in "${sizes[@]}"; do
	head -c "$s" /dev/urandom >"load/f-$s.bin"
done
cd "$work" || exit 1

# ---------------------------------------------------------------------------------------
# Start-up errors: usage errors exit 2; a missing DIR, a DIR that is a file exit 1 naming it.
free=$((port_base + 90)) # past the ports start() tries (2 a try)
for args in "--no-such-option" "--port" "--port abc" "--tls-cert $work/secret.txt"; do
	begin "usage error '$args' exits 2 with a message"
	# shellcheck disable=SC2086 # the words of args are the arguments
	run_exit usage 3 "$root" --bind 127.0.0.1 $args
	[ "$run_status" = 2 ] || no "exit status $run_status, expected 2"
	[ -s "$R/usage.err" ] || no "nothing on stderr"
	finish
done
begin "a missing DIR exits 1 naming it"
run_exit missing 3 "$work/no-such-dir" --bind 127.0.0.1 --port "$free"
[ "$run_status" = 1 ] || no "exit status $run_status, expected 1"
grep -q no-such-dir "$R/missing.err" || no "stderr does not name it: $(head -c 300 "$R/missing.err")"
finish
begin "a DIR that is a file exits 1 naming it"
run_exit notdir 3 "$root/hello.txt" --bind 127.0.0.1 --port "$free"
[ "$run_status" = 1 ] || no "exit status $run_status, expected 1"
grep -q hello.txt "$R/notdir.err" || no "stderr does not name it: $(head -c 300 "$R/notdir.err")"
finish

# ---------------------------------------------------------------------------------------
# The main server: 2 workers, --log, --metrics.
start main 0 "$root" --bind 127.0.0.1 --workers 2 --log --metrics /metrics --grace-ms 1000 ||
	fatal "the server did not start: $(cat "$work/main.err")"
mainpid=${spid[main]}
U=http://127.0.0.1:$port

begin "the serving line names the URL (and no HTTPS without TLS options)"
line=$(grep "giong-serve: serving" "$work/main.err")
[[ $line == *"http://127.0.0.1:$port/"* ]] || no "no http://127.0.0.1:$port/ in: $line"
[[ $line == *https://* ]] && no "an HTTPS URL without TLS options: $line"
finish

begin "a second server on the same port exits 1 naming the port"
run_exit inuse 3 "$root" --bind 127.0.0.1 --port "$port"
[ "$run_status" = 1 ] || no "exit status $run_status, expected 1"
grep -q "$port" "$R/inuse.err" || no "stderr does not name the port: $(head -c 300 "$R/inuse.err")"
finish

begin "--bind 127.0.0.1 does not answer on 127.0.0.2 nor on [::1]"
for a in 127.0.0.2 '[::1]'; do
	st=$(curl -sS --max-time 3 -o /dev/null -w '%{http_code}' "http://$a:$port/hello.txt" 2>/dev/null)
	[ "$st" = 000 ] || no "$a answered $st"
done
finish

# --- basic GET and HEAD ---
begin "GET /hello.txt: 200, the bytes, Content-Length, Content-Type, ETag, Last-Modified, Accept-Ranges"
req hello "$U/hello.txt"
want_status 200
want_body_file "$root/hello.txt"
want_hdr Content-Length 13
want_hdr_ci Content-Type 'text/plain; charset=utf-8'
want_hdr_re ETag '^"[^"]+"$'
want_hdr Last-Modified "$lm_hello"
want_hdr Accept-Ranges bytes
finish
etag_hello=$(hdr ETag hello)

begin "a query string is ignored"
req q "$U/hello.txt?x=1&y=../../secret.txt"
want_status 200
want_body_file "$root/hello.txt"
finish

begin "HEAD /hello.txt has GET's headers (Date aside)"
req hhead -I "$U/hello.txt"
want_status 200
if ! diff <(tr -d '\r' <"$R/hello.h" | grep -vi '^date:') \
	<(tr -d '\r' <"$R/hhead.h" | grep -vi '^date:') >"$R/head.diff"; then
	no "the headers differ: $(cat "$R/head.diff")"
fi
finish

begin "HEAD /hello.txt sends no body (raw socket)"
raw headraw HEAD /hello.txt
want_status 200
grep -qi '^content-length: *13' "$R/headraw.raw" || no "no Content-Length: 13"
n=$(sed '1,/^\r$/d' "$R/headraw.raw" | wc -c)
[ "$n" = 0 ] || no "$n bytes after the headers"
finish

for m in POST PUT DELETE OPTIONS PATCH; do
	begin "$m /hello.txt: 405 with Allow: GET, HEAD"
	if [ $m = POST ]; then
		req m405 -d 'x=1' "$U/hello.txt"
	else
		req m405 -X $m "$U/hello.txt"
	fi
	want_status 405
	want_hdr Allow 'GET, HEAD'
	finish
done
# A method the HTTP layer does not know at all is not implemented (RFC 9110 15.6.2).
begin "BREW /hello.txt: 501"
req m501 -X BREW "$U/hello.txt"
want_status 501
finish

# --- content types ---
for t in "t.html text/html; charset=utf-8" "t.txt text/plain; charset=utf-8" \
	"t.json application/json; charset=utf-8" "t.png image/png" \
	"t.nosuchext application/octet-stream"; do
	f=${t%% *} ty=${t#* }
	begin "Content-Type of $f: $ty"
	req ct "$U/$f"
	want_status 200
	want_hdr_ci Content-Type "$ty"
	want_body_file "$root/$f"
	finish
done
begin "Content-Type of t.css is text/css, of t.js a javascript type"
req ct "$U/t.css"
want_status 200
want_hdr_re Content-Type '^text/css(;|$)'
req ct "$U/t.js"
want_status 200
want_hdr_re Content-Type 'javascript'
finish

# --- directories ---
begin "GET /sub: 301 to /sub/"
req r301 "$U/sub"
want_status 301
want_hdr_re Location '^(https?://[^/]+)?/sub/$'
finish
begin "GET /sub?x=1&y=2: 301 to /sub/?x=1&y=2 (query kept)"
req r301 "$U/sub?x=1&y=2"
want_status 301
want_hdr_re Location '^(https?://[^/]+)?/sub/\?x=1&y=2$'
finish
# "//sub" names the directory "sub" too: its redirect must not be "//sub/", which a browser
# reads as the URL of a host named "sub" (an open redirect).
begin "GET //sub (raw): 301 to /sub/, never to //sub/"
raw dslash GET //sub
want_status 301
grep -aqi $'^location: /sub/\r$' "$R/dslash.raw" || no "Location: $(grep -ai '^location:' "$R/dslash.raw")"
finish
begin "GET /site/ serves its index.html"
req idx "$U/site/"
want_status 200
want_body_file "$root/site/index.html"
want_hdr_ci Content-Type 'text/html; charset=utf-8'
finish

# entry_text LISTING HREF - the text after <a href="HREF">...</a>, tags as spaces, up to the
# next <a (the size and the time of the entry)
entry_tail() {
	local rest=${1#*"href=\"$2\""}
	[ "$rest" = "$1" ] && return 1
	rest=${rest#*</a>}
	rest=${rest%%<a *}
	printf ' %s ' "$rest" | sed 's/<[^>]*>/ /g' | tr '\n' ' '
}
# hrefs FILE DIRPATH - the hrefs of a listing, in order, "../" left out, DIRPATH stripped
# from absolute ones.
hrefs() {
	grep -o 'href="[^"]*"' "$1" | sed "s/^href=\"//; s/\"\$//; s|^$2||" | grep -vx '\.\./'
}

begin "GET /: an HTML listing, sorted by name, dot names left out, dirs with /, sizes, times, no ../"
req list "$U/"
want_status 200
want_hdr_ci Content-Type 'text/html; charset=utf-8'
expect=()
for f in "$root"/*; do
	n=${f##*/}
	if [ -d "$f" ]; then expect+=("$(urlenc "$n")/"); else expect+=("$(urlenc "$n")"); fi
done
got=$(hrefs "$R/list.b" /)
[ "$got" = "$(printf '%s\n' "${expect[@]}")" ] ||
	no "the hrefs are not the entries in byte order: got $(echo "$got" | tr '\n' ' ')expected ${expect[*]}"
grep -q 'href="\(/\)\?\.\./"' "$R/list.b" && no "a link to ../ at the root"
grep -Eq '\.hidden|\.env|\.git|\.well-known' "$R/list.b" && no "a dot name is listed"
listing=$(cat "$R/list.b")
grep -q 'href="\(/\)\?sub/">sub/</a>' "$R/list.b" || no 'no <a href="sub/">sub/</a>'
tail_=$(entry_tail "$listing" hello.txt || entry_tail "$listing" /hello.txt)
[[ $tail_ =~ [^0-9]13[^0-9] ]] || no "no size 13 after hello.txt: '$tail_'"
[[ $tail_ == *2021* ]] || no "no modification time (2021) after hello.txt: '$tail_'"
tail_=$(entry_tail "$listing" big.bin || entry_tail "$listing" /big.bin)
[[ $tail_ =~ [^0-9]1073741824[^0-9] ]] || no "no size 1073741824 after big.bin: '$tail_'"
tail_=$(entry_tail "$listing" sub/ || entry_tail "$listing" /sub/)
[[ $tail_ =~ [[:space:]]-[[:space:]] ]] || no "no '-' size after sub/: '$tail_'"
finish

begin "GET /sub/: a listing with ../ and in.txt, no .hidden"
req list2 "$U/sub/"
want_status 200
grep -q 'href="\(/\)\?\.\./"' "$R/list2.b" || no "no link to ../"
grep -q 'href="\(/sub/\)\?in\.txt"' "$R/list2.b" || no "no link to in.txt"
grep -q hidden "$R/list2.b" && no ".hidden is listed"
finish

begin "hostile names: escaped in the listing's text, percent-encoded in its hrefs, byte order"
req hl "$U/hostile/"
want_status 200
grep -qi '<script' "$R/hl.b" && no "a raw <script in the listing"
grep -qi '<img' "$R/hl.b" && no "a raw <img in the listing"
listing=$(cat "$R/hl.b")
expect=()
while IFS= read -r n; do expect+=("$(urlenc "$n")"); done < <(printf '%s\n' "${hostile[@]}" | sort)
got=$(hrefs "$R/hl.b" /hostile/)
[ "$got" = "$(printf '%s\n' "${expect[@]}")" ] ||
	no "the hrefs are not the encoded names in byte order: got $(echo "$got" | tr '\n' ' ')expected ${expect[*]}"
for i in "${!hostile[@]}"; do
	n=${hostile[$i]} e=$(urlenc "${hostile[$i]}")
	for pre in "" /hostile/; do
		rest=${listing#*"href=\"$pre$e\">"}
		[ "$rest" != "$listing" ] && break
	done
	if [ "$rest" = "$listing" ]; then
		no "no href=\"$e\" for $(printf '%s' "$n" | cat -v)"
		continue
	fi
	text=${rest%%</a>*}
	[[ $text == *[\<\>\"\']* ]] && no "unescaped text for $(printf '%s' "$n" | cat -v): $text"
	[ "$(htmlunesc "$text")" = "$n" ] || no "the text '$(printf '%s' "$text" | cat -v)' is not the name"
done
finish

begin "hostile names: each href gives the file's bytes"
for i in "${!hostile[@]}"; do
	req hf "$U/hostile/$(urlenc "${hostile[$i]}")"
	want_status 200 || continue
	want_body "hostile file $i"$'\n'
done
finish

begin "the path is percent-decoded once (/a%2541.txt is the file a%41.txt)"
req pct "$U/a%2541.txt"
want_status 200
want_body_file "$root/a%41.txt"
finish

# --- path safety ---
begin "hidden names: /.git/config, /.env, /.hidden, /sub/.hidden, /%2egit/config are 404"
for p in /.git/config /.env /.hidden /sub/.hidden /.git/ /.git; do
	req hid "$U$p"
	want_status 404 || break
done
raw hidraw GET /%2egit/config
want_status 404
grep -aq bare "$R/hidraw.raw" && no "/%2egit/config gave .git/config"
finish
begin "/.well-known/x.txt is served"
req wk "$U/.well-known/x.txt"
want_status 200
want_body_file "$root/.well-known/x.txt"
finish

# raw_safe DESCRIPTION TARGET STATUSES... - a raw GET of TARGET answers one of STATUSES and
# shows no secret (nor /etc/passwd).
raw_safe() {
	local d=$1 t=$2
	shift 2
	begin "$d: GET $t -> $*"
	raw safe GET "$t"
	want_status "$@"
	grep -aqF "$secret" "$R/safe.raw" && no "THE SECRET FROM OUTSIDE DIR IS IN THE REPLY"
	grep -aq 'root:.*:0:0:' "$R/safe.raw" && no "/etc/passwd IS IN THE REPLY"
	finish
}
any=(400 403 404)
raw_safe "traversal" /../etc/passwd "${any[@]}"
raw_safe "traversal" /%2e%2e/%2e%2e/etc/passwd "${any[@]}"
raw_safe "encoded slash" /a%2fb "${any[@]}"
raw_safe "encoded backslash" /..%5c..%5cetc/passwd "${any[@]}"
raw_safe "NUL" /a%00b "${any[@]}"
raw_safe "double slash" //etc/passwd "${any[@]}"
raw_safe "absolute form" http://x/../../etc/passwd "${any[@]}"
raw_safe "traversal" /sub/../../x "${any[@]}"
raw_safe "traversal to the secret" /../secret.txt "${any[@]}"
raw_safe "traversal to the secret" /%2e%2e/secret.txt "${any[@]}"
raw_safe "traversal to the secret" /%2E%2E/secret.txt "${any[@]}"
raw_safe "traversal to the secret" /.%2e/secret.txt "${any[@]}"
raw_safe "traversal to the secret" /sub/%2e%2e/%2e%2e/secret.txt "${any[@]}"
raw_safe "traversal to the secret" /..%2fsecret.txt "${any[@]}"
raw_safe "traversal to the secret" /sub%2f..%2f..%2fsecret.txt "${any[@]}"
raw_safe "traversal to the secret" /%2e%2e%2fsecret.txt "${any[@]}"
raw_safe "traversal to the secret" '/..%5csecret.txt' "${any[@]}"
raw_safe "traversal to the secret" '/..\secret.txt' "${any[@]}"
raw_safe "absolute form to the secret" http://x/../secret.txt "${any[@]}"
raw_safe "absolute form to the secret" http://127.0.0.1/%2e%2e/secret.txt "${any[@]}"
raw_safe "no leading slash" ../secret.txt "${any[@]}"
raw_safe "outside symlink (relative)" /links/out.txt 404
raw_safe "outside symlink (absolute)" /links/abs-out.txt 404
raw_safe "outside directory symlink" /links/outdir/secret.txt 404
raw_safe "outside directory symlink" /links/outdir/ 404
raw_safe ".. inside DIR is refused too" /sub/../hello.txt 404
raw_safe "%2e%2e inside DIR is refused too" /sub/%2e%2e/hello.txt 404
raw_safe "an encoded / is refused" /sub%2fin.txt 404
raw_safe "an encoded \\ is refused" /sub%5cin.txt 404
raw_safe "a literal \\ is refused" '/sub\in.txt' 404
raw_safe "NUL after the name" /hello.txt%00 404
raw_safe "NUL before an extension" /hello.txt%00.png 404
raw_safe "a control byte" /hel%01lo.txt 404
raw_safe "DEL" /hello.txt%7f 404
raw_safe "a malformed escape" /hello%zz.txt 400
raw_safe "a truncated escape" /hello.txt%2 400
raw_safe "a lone %" /hello.txt% 400

begin "symbolic links inside DIR work (file, directory)"
req sl "$U/links/in.txt"
want_status 200 && want_body_file "$root/hello.txt"
req sl "$U/links/indir/in.txt"
want_status 200 && want_body_file "$root/sub/in.txt"
finish

# --- special files ---
begin "a FIFO gets 403 (3 times) and the server answers at once afterwards"
for i in 1 2 3; do
	req fifo --max-time 5 "$U/special/fifo"
	want_status 403 || break
done
for i in 1 2 3 4; do
	req after --max-time 2 "$U/hello.txt"
	want_status 200 || break
done
finish
if [ $have_sock = 1 ]; then
	begin "a Unix socket file gets 403"
	req sock --max-time 5 "$U/special/sock"
	want_status 403
	req after --max-time 2 "$U/hello.txt"
	want_status 200
	finish
else
	echo "skip: a Unix socket file (no python3 to make one)"
fi
if [ $have_dev = 1 ]; then
	begin "a character device gets 403"
	req dev --max-time 5 "$U/special/null"
	want_status 403
	req after --max-time 2 "$U/hello.txt"
	want_status 200
	finish
else
	echo "skip: a device file (mknod is not allowed here)"
fi

# --- conditionals ---
req c0 "$U/cond.txt"
etag=$(hdr ETag c0)
lm=$(hdr Last-Modified c0)
begin "cond.txt: Last-Modified is its mtime"
want_hdr Last-Modified "Fri, 06 May 2022 07:08:09 GMT"
finish
# cond DESCRIPTION STATUS CURL-ARGS... - a conditional GET of /cond.txt
cond() {
	local d=$1 s=$2
	shift 2
	begin "$d -> $s"
	req cond "$@" "$U/cond.txt"
	want_status "$s"
	if [ "$s" = 304 ]; then
		want_hdr ETag "$etag"
		want_empty_body
	elif [ "$s" = 412 ]; then
		want_body $'412 Precondition Failed\n'
	else
		want_body_file "$root/cond.txt"
	fi
	finish
}
cond "If-None-Match: the ETag" 304 -H "If-None-Match: $etag"
cond "If-None-Match: *" 304 -H "If-None-Match: *"
cond "If-None-Match: a list with the ETag" 304 -H "If-None-Match: \"nope\", $etag , \"x\""
cond "If-None-Match: W/ the ETag (weak compare)" 304 -H "If-None-Match: W/$etag"
cond "If-None-Match: another ETag" 200 -H 'If-None-Match: "nope"'
cond "If-Modified-Since: Last-Modified" 304 -H "If-Modified-Since: $lm"
cond "If-Modified-Since: a day later" 304 -H "If-Modified-Since: Sat, 07 May 2022 07:08:09 GMT"
cond "If-Modified-Since: a day earlier" 200 -H "If-Modified-Since: Thu, 05 May 2022 07:08:09 GMT"
cond "If-Modified-Since ignored beside a non-matching If-None-Match" 200 \
	-H 'If-None-Match: "nope"' -H "If-Modified-Since: $lm"
cond "If-None-Match matching beside an old If-Modified-Since" 304 \
	-H "If-None-Match: $etag" -H "If-Modified-Since: Thu, 05 May 2022 07:08:09 GMT"
cond "If-Match: the ETag" 200 -H "If-Match: $etag"
cond "If-Match: *" 200 -H "If-Match: *"
cond "If-Match: a list with the ETag" 200 -H "If-Match: \"nope\", $etag"
cond "If-Match: another ETag" 412 -H 'If-Match: "nope"'
cond "If-Match: W/ the ETag (strong compare)" 412 -H "If-Match: W/$etag"
cond "If-Match: malformed (ignored)" 200 -H 'If-Match: nope'
cond "If-Unmodified-Since: Last-Modified" 200 -H "If-Unmodified-Since: $lm"
cond "If-Unmodified-Since: a day earlier" 412 -H "If-Unmodified-Since: Thu, 05 May 2022 07:08:09 GMT"
cond "If-Unmodified-Since: not a date (ignored)" 200 -H "If-Unmodified-Since: yesterday"
cond "If-Unmodified-Since ignored beside a matching If-Match" 200 \
	-H "If-Match: $etag" -H "If-Unmodified-Since: Thu, 05 May 2022 07:08:09 GMT"
cond "If-Match before If-None-Match: a failed If-Match is 412, not 304" 412 \
	-H 'If-Match: "nope"' -H "If-None-Match: $etag"
cond "If-Match matching, then If-None-Match matching: 304" 304 \
	-H "If-Match: $etag" -H "If-None-Match: $etag"
begin "If-Match: another ETag with a Range: 412, no partial content"
req condr -H 'If-Match: "nope"' -H 'Range: bytes=0-0' "$U/cond.txt"
want_status 412
finish
begin "HEAD with If-None-Match: the ETag -> 304"
req condh -I -H "If-None-Match: $etag" "$U/cond.txt"
want_status 304
finish

# --- files changed under the descriptor cache ---
f=$root/mut/inplace.txt
printf 'version one\n' >"$f"
req ip1 "$U/mut/inplace.txt"
req ip1b "$U/mut/inplace.txt"
e1=$(hdr ETag ip1b)
printf 'version two, longer\n' >"$f"
begin "a file rewritten in place with another size: new bytes, new length, new ETag, at once"
req ip2 "$U/mut/inplace.txt"
want_status 200
want_body_file "$f"
want_hdr Content-Length 20
e2=$(hdr ETag)
[ "$e2" != "$e1" ] || no "the ETag did not change: $e2"
req ip3 -H "If-None-Match: $e1" "$U/mut/inplace.txt"
want_status 200
want_body_file "$f"
finish
printf 'version TWO, LONGER\n' >"$f"
touch -d '2020-01-01 00:00:00 UTC' "$f"
begin "a file rewritten in place with the same size and another mtime: new bytes, new ETag"
req ip4 "$U/mut/inplace.txt"
want_status 200
want_body_file "$f"
want_hdr Last-Modified "Wed, 01 Jan 2020 00:00:00 GMT"
e3=$(hdr ETag)
[ "$e3" != "$e2" ] || no "the ETag did not change: $e3"
req ip5 -H "If-None-Match: $e2" "$U/mut/inplace.txt"
want_status 200
want_body_file "$f"
finish

f=$root/mut/ren.txt
printf 'before the rename\n' >"$f"
req ren "$U/mut/ren.txt"
req ren "$U/mut/ren.txt"
e1=$(hdr ETag)
printf 'after the rename, longer\n' >"$root/mut/.ren.tmp"
mv "$root/mut/.ren.tmp" "$f"
begin "a file replaced by a rename is served new within 2 s"
t0=$(date +%s%N)
ren_new() {
	req ren "$U/mut/ren.txt"
	cmp -s "$R/ren.b" "$f"
}
if wait_for 2 ren_new; then
	[ "$(hdr ETag)" != "$e1" ] || no "new bytes under the old ETag $e1"
	cur="$cur (after $((($(date +%s%N) - t0) / 1000000)) ms)"
else
	no "still the old file after 2 s"
fi
finish

f=$root/mut/del.txt
printf 'to be deleted\n' >"$f"
req del "$U/mut/del.txt"
req del "$U/mut/del.txt"
rm "$f"
begin "a deleted file gives 404 at once"
req del "$U/mut/del.txt"
want_status 404
finish

begin "a file created after a 404 is served within 2 s"
req new "$U/mut/new.txt"
want_status 404
printf 'new file\n' >"$root/mut/new.txt"
new_served() {
	req new "$U/mut/new.txt"
	[ "$st" = 200 ]
}
wait_for 2 new_served || no "still $st after 2 s"
finish

# --- ranges ---
# range DESCRIPTION RANGE STATUS CONTENT-RANGE BODY [CURL-ARGS...] - a GET of /r.bin
# ("0123456789abcdefghij") with Range: RANGE
range() {
	local d=$1 rg=$2 s=$3 cr=$4 body=$5
	shift 5
	begin "Range: $rg ($d) -> $s${cr:+ $cr}"
	req range -H "Range: $rg" "$@" "$U/r.bin"
	want_status "$s"
	if [ -n "$cr" ]; then
		want_hdr Content-Range "$cr"
	else
		want_no_hdr Content-Range
	fi
	if [ "$s" != 416 ]; then
		want_body "$body"
		want_hdr Content-Length "${#body}"
	fi
	finish
}
all=0123456789abcdefghij
range "the first byte" bytes=0-0 206 "bytes 0-0/20" 0
range "the last byte" bytes=-1 206 "bytes 19-19/20" j
range "from 5 on" bytes=5- 206 "bytes 5-19/20" 56789abcdefghij
range "a middle" bytes=3-6 206 "bytes 3-6/20" 3456
range "a suffix longer than the file" bytes=-100 206 "bytes 0-19/20" "$all"
range "last past the end, clamped" bytes=10-1000 206 "bytes 10-19/20" abcdefghij
range "first = size" bytes=20- 416 "bytes */20" ""
range "first past the end" bytes=100-200 416 "bytes */20" ""
range "two ranges" bytes=0-1,5-6 200 "" "$all"
range "malformed" bytes=abc 200 "" "$all"
range "last before first" bytes=5-2 200 "" "$all"
range "another unit" items=0-1 200 "" "$all"
req rb "$U/r.bin"
etag_r=$(hdr ETag rb)
range "If-Range: the current ETag" bytes=0-0 206 "bytes 0-0/20" 0 -H "If-Range: $etag_r"
range "If-Range: another ETag" bytes=0-0 200 "" "$all" -H 'If-Range: "nope"'
begin "Range on a 0-byte file: bytes=-1 -> 200 empty, bytes=0- -> 200 or 416"
req er -H "Range: bytes=-1" "$U/empty.txt"
want_status 200
want_empty_body
req er -H "Range: bytes=0-" "$U/empty.txt"
want_status 200 416
want_empty_body
finish

# --- precompressed siblings ---
# pre DESCRIPTION ACCEPT-ENCODING FILE CONTENT-ENCODING [PATH] - GET /a.txt (or PATH)
pre() {
	local d=$1 ae=$2 file=$3 ce=$4 p=${5:-/a.txt}
	begin "$p with Accept-Encoding: '$ae' ($d)"
	if [ -n "$ae" ]; then
		req pre -H "Accept-Encoding: $ae" "$U$p"
	else
		req pre "$U$p"
	fi
	want_status 200
	want_body_file "$root/$file"
	want_hdr Content-Length "$(wc -c <"$root/$file")"
	want_hdr_ci Content-Type 'text/plain; charset=utf-8'
	if [ -n "$ce" ]; then want_hdr Content-Encoding "$ce"; else want_no_hdr Content-Encoding; fi
	[[ ,$(hdr Vary | tr -d ' '), == *,[Aa]ccept-[Ee]ncoding,* ]] || no "no Vary: Accept-Encoding"
	finish
}
pre "the .gz" gzip a.txt.gz gzip
pre "the .br" br a.txt.br br
pre "br preferred" "gzip, br" a.txt.br br
pre "br preferred" "br;q=0.5, gzip;q=1" a.txt.br br
pre "br refused" "gzip, br;q=0" a.txt.gz gzip
pre "the plain file" "" a.txt ""
pre "gzip refused" "gzip;q=0" a.txt ""
pre "no .br sibling" br c.txt "" /c.txt
begin "HEAD /a.txt with Accept-Encoding: gzip: the .gz's Content-Length"
req preh -I -H "Accept-Encoding: gzip" "$U/a.txt"
want_status 200
want_hdr Content-Length "$(wc -c <"$root/a.txt.gz")"
want_hdr Content-Encoding gzip
finish
begin "curl --compressed decodes /c.txt to the original"
req cc --compressed "$U/c.txt"
want_status 200
want_hdr Content-Encoding gzip
want_body_file "$root/c.txt"
finish

# --- empty and big files ---
begin "a 0-byte file: 200, Content-Length: 0"
req empty "$U/empty.txt"
want_status 200
want_hdr Content-Length 0
want_empty_body
finish
begin "HEAD of the 1 GiB sparse file: Content-Length 1073741824"
req bigh -I "$U/big.bin"
want_status 200
want_hdr Content-Length 1073741824
finish
begin "ranges of the 1 GiB file: its last 8 bytes, 4 NULs in the middle"
req bigr -H "Range: bytes=-8" "$U/big.bin"
want_status 206
want_hdr Content-Range "bytes 1073741816-1073741823/1073741824"
want_body $'THE-END\n'
req bigr -H "Range: bytes=1073741820-" "$U/big.bin"
want_status 206
want_hdr Content-Range "bytes 1073741820-1073741823/1073741824"
want_body $'END\n'
req bigr -H "Range: bytes=536870912-536870915" "$U/big.bin"
want_status 206
[ "$(od -An -tx1 "$R/bigr.b" | tr -d ' \n')" = 00000000 ] || no "not 4 NULs"
finish
# Every byte within 60 s whatever the build; in under 10 s too where that means something:
# not under a sanitizer or the fault hooks (GIONG_TEST_TIMED=0 from tests/serve/CMakeLists.txt:
# an ASan or TSan build at ctest -j2 beside a CI run is not a measure of giong-serve's speed).
timed=${GIONG_TEST_TIMED:-1}
begin "the whole 1 GiB file over HTTP$([ "$timed" = 1 ] && echo " in under 10 s")"
r=$(curl -sS --max-time 60 -o /dev/null -w '%{http_code} %{size_download} %{time_total}' \
	"$U/big.bin" 2>&1)
show=
[ "${r% *}" = "200 1073741824" ] || no "got '$r', expected 200 1073741824 (status, bytes)"
if [ "$timed" = 1 ] && [ "${r% *}" = "200 1073741824" ]; then
	awk -v t="${r##* }" 'BEGIN { exit !(t < 10) }' || no "it took ${r##* } s, not under 10 s"
fi
cur="$cur (${r##* } s)"
finish

# --- 500 concurrent clients ---
# load TAG - 500 GETs of the load/ files by two curls of 250 parallel transfers each; sets
# load_ok (how many were "200 <the file's size>") and load_bad (the first wrong line)
load() {
	local k i s p=()
	for k in a b; do
		for ((i = 0; i < 250; i++)); do
			s=${sizes[i % ${#sizes[@]}]}
			printf 'url = "%s/load/f-%s.bin?c=%s%s%s"\noutput = "/dev/null"\n' "$U" "$s" "$1" "$k" "$i"
		done >"$R/load-$1-$k.cfg"
		curl -sS --max-time 10 --parallel --parallel-immediate --parallel-max 250 \
			-K "$R/load-$1-$k.cfg" -w '%{http_code} %{size_download} %{url_effective}\n' \
			>"$R/load-$1-$k.res" 2>"$R/load-$1-$k.err" &
		p+=($!)
	done
	wait "${p[@]}"
	cat "$R/load-$1-a.res" "$R/load-$1-b.res" >"$R/load-$1.res"
	load_ok=$(awk '{ u = $3; sub(/.*f-/, "", u); sub(/\.bin.*/, "", u) }
		$1 == 200 && $2 == u { n++ } END { print n + 0 }' "$R/load-$1.res")
	load_bad=$(awk '{ u = $3; sub(/.*f-/, "", u); sub(/\.bin.*/, "", u) }
		!($1 == 200 && $2 == u) { print; exit }' "$R/load-$1.res")
	[ -n "$load_bad" ] || load_bad=$(head -c 300 "$R/load-$1-a.err" "$R/load-$1-b.err")
}
# settle PID - its descriptor count once it stops changing (3 s at most)
settle() {
	local prev=-1 n i
	for i in $(seq 1 15); do
		n=$(fds "$1")
		[ "$n" = "$prev" ] && break
		prev=$n
		sleep 0.2
	done
	echo "$n"
}
begin "500 concurrent clients (warm-up): all 200 with the right length"
load warm
[ "$load_ok" = 500 ] || no "$load_ok of 500 right; first wrong: $load_bad"
finish
baseline=$(settle "$mainpid")
begin "500 concurrent clients: all 200 with the right length, then no descriptor more than the $baseline after the warm-up"
load hot
[ "$load_ok" = 500 ] || no "$load_ok of 500 right; first wrong: $load_bad"
fds_back() { [ "$(fds "$mainpid")" -le "$baseline" ]; }
wait_for 3 fds_back || no "$(fds "$mainpid") descriptors open 3 s after the load, $baseline before"
finish

# --- metrics ---
# requests_total ID - the sum of giong_http_requests_total's samples in reply ID
requests_total() {
	awk '/^giong_http_requests_total([{ \t]|$)/ {
		l = $0; sub(/^[^ \t{]+(\{[^}]*\})?[ \t]+/, "", l); split(l, a, /[ \t]+/); s += a[1]
	} END { print s + 0 }' "$R/$1.b"
}
begin "GET /metrics: Prometheus text with giong_http_requests_total (a growing counter) and giong_http_connections_open"
req m1 "$U/metrics"
want_status 200
want_hdr_re Content-Type '^text/plain; *version=0\.0\.4'
grep -Eq '^giong_http_requests_total([{ ]|$)' "$R/m1.b" || no "no giong_http_requests_total sample"
grep -Eq '^# TYPE giong_http_requests(_total)? counter' "$R/m1.b" || no "giong_http_requests_total is not TYPE'd a counter"
grep -Eq '^giong_http_connections_open([{ ]|$)' "$R/m1.b" || no "no giong_http_connections_open sample"
grep -Eq '^giong_serve_access_log_dropped_total 0$' "$R/m1.b" ||
	no "giong_serve_access_log_dropped_total is not 0: $(grep access_log "$R/m1.b")"
# Built with TLS (a backend given): the process's kernel TLS counts, by reason.
if [ ${#backends[@]} -gt 0 ]; then
	for m in tx rx rx_fallback released key_update; do
		grep -Eq "^giong_tls_ktls_${m}_total [0-9]+\$" "$R/m1.b" || no "no giong_tls_ktls_${m}_total sample"
	done
	for why in module cipher other; do
		grep -Eq "^giong_tls_ktls_fallback_total\{reason=\"$why\"\} [0-9]+\$" "$R/m1.b" ||
			no "no giong_tls_ktls_fallback_total sample for $why"
	done
fi
n1=$(requests_total m1)
for i in 1 2 3 4 5; do curl -sS --max-time 10 -o /dev/null "$U/hello.txt"; done
grown() {
	req m2 "$U/metrics"
	n2=$(requests_total m2)
	awk -v a="$n1" -v b="$n2" 'BEGIN { exit !(b >= a + 5) }'
}
wait_for 1 grown || no "giong_http_requests_total went from $n1 to $n2 over 5 requests"
finish

# --- the log ---
d1=$(date -u +%d/%b/%Y)
req lp "$U/log-probe.txt"
req lp -H "If-None-Match: $(hdr ETag lp)" "$U/log-probe.txt"
req lp -I "$U/log-probe.txt"
req lp "$U/no-such-log-probe"
d2=$(date -u +%d/%b/%Y)
clf='^127\.0\.0\.1 - - \[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} \+0000\] "'
begin "--log: one common-log-format line per request on stdout (200 with bytes, 304 and HEAD with -, 404)"
show=
logged() {
	[ "$(grep -Ec "$clf"'GET /log-probe\.txt HTTP/1\.1" 200 10$' "$work/main.out")" = 1 ] &&
		[ "$(grep -Ec "$clf"'GET /log-probe\.txt HTTP/1\.1" 304 -$' "$work/main.out")" = 1 ] &&
		[ "$(grep -Ec "$clf"'HEAD /log-probe\.txt HTTP/1\.1" 200 -$' "$work/main.out")" = 1 ] &&
		[ "$(grep -Ec "$clf"'GET /no-such-log-probe HTTP/1\.1" 404 ([0-9]+|-)$' "$work/main.out")" = 1 ]
}
if wait_for 2 logged; then
	grep 'log-probe.txt HTTP/1.1" 200 10$' "$work/main.out" | grep -qE "\[($d1|$d2):" ||
		no "the date is not today's: $(grep log-probe "$work/main.out" | head -n 1)"
else
	no "not one well-formed line each within 2 s; the log-probe lines: $(grep log-probe "$work/main.out")"
fi
# Each worker writes its lines in batches within 0.1 s: the other worker's may come later.
load_logged() { # (not "n": wait_for's own count is a local of that name)
	load_lines=$(grep -Ec "$clf"'GET /load/f-[0-9]+\.bin\?c=[a-z]+[0-9]+ HTTP/1\.1" 200 [0-9]+$' "$work/main.out")
	[ "$load_lines" = 1000 ]
}
wait_for 2 load_logged || no "$load_lines well-formed lines for the 1000 load requests"
finish

# --- SIGTERM during a slow download ---
curl -sS --max-time 10 --limit-rate 1M -o "$R/slow.b" "$U/big.bin" 2>/dev/null &
slow=$!
bg_pids+=("$slow")
begin "giong_http_connections_open counts a download in progress"
wait_for 3 test -s "$R/slow.b" || no "the slow download did not start"
req m3 "$U/metrics"
n=$(awk '/^giong_http_connections_open([{ \t]|$)/ {
	l = $0; sub(/^[^ \t{]+(\{[^}]*\})?[ \t]+/, "", l); split(l, a, /[ \t]+/); s += a[1]
} END { print s + 0 }' "$R/m3.b")
awk -v n="$n" 'BEGIN { exit !(n >= 1) }' || no "giong_http_connections_open is $n"
finish
# 5 s: the grace (1 s), and the exit of a sanitized build (LeakSanitizer's scan: serve.log_stall
# once took 2060 ms to stop) on a busy machine; a stop that waited for the download (at 1 MB/s,
# 1 GiB) would take minutes.
begin "SIGTERM with a download in progress: exit 0 and 'giong-serve: stopped' within the grace (1 s) and 4 s"
show=
stop main 1
[ "$stop_status" = 0 ] || no "exit status $stop_status"
[ "$stop_ms" -le 5000 ] || no "it took $stop_ms ms"
grep -q "giong-serve: stopped" "$work/main.err" || no "no 'giong-serve: stopped' on stderr"
cur="$cur ($stop_ms ms)"
finish
wait_for 2 eval "! kill -0 $slow 2>/dev/null" || kill "$slow" 2>/dev/null
{ wait "$slow"; } 2>/dev/null
bg_pids=()

# SIGTERM after SIGTERM, as timeout(1) and systemd send them (the process, then its group):
# one landing after the run has ended must not kill the server before its clean-up and
# last words (it did, with status 143, in 2 of 6 such stops before it kept them blocked).
begin "a stream of SIGTERMs to the end: exit 0 and 'giong-serve: stopped'"
show=
if start storm 0 "$root" --bind 127.0.0.1 --workers 2 --grace-ms 1000; then
	pid=${spid[storm]} t_end=$((SECONDS + 15))
	while kill -TERM "$pid" 2>/dev/null && [ $SECONDS -lt $t_end ]; do :; done
	if kill -0 "$pid" 2>/dev/null; then
		no "still running after 15 s of SIGTERMs"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid"
	st=$?
	spid[storm]=
	[ "$st" = 0 ] || no "exit status $st"
	grep -q "giong-serve: stopped" "$work/storm.err" || no "no 'giong-serve: stopped' on stderr"
else
	no "the server did not start"
fi
finish

# --idle-ms: a kept-alive connection that asks nothing more is closed after it (the
# memory of idle connections is measured with a longer one: bench/load/ktls_guest.sh).
begin "--idle-ms 300: a kept-alive connection asking nothing more is closed, and counted"
if start idle 0 "$root" --bind 127.0.0.1 --workers 1 --idle-ms 300 --metrics /metrics; then
	printf -v q 'GET /hello.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'
	# shellcheck disable=SC2016 # the inner script's own arguments
	timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 9
		printf "%s" "$2" >&3
		cat <&3' raw "$port" "$q" >"$R/idle.raw" 2>/dev/null
	rc=$?
	[ "$rc" = 0 ] || no "still open after 5 s, or no connection (exit status $rc)"
	grep -q '^HTTP/1.1 200' "$R/idle.raw" || no "the request was not answered first"
	req idlem "http://127.0.0.1:$port/metrics"
	grep -q '^giong_http_idle_timeouts_total{worker="0",scheme="http"} 1$' "$R/idlem.b" ||
		no "$(grep '^giong_http_idle_timeouts_total{' "$R/idlem.b" | tr '\n' ' ')"
	stop idle
else
	no "the server did not start"
fi
finish

# A head the HTTP layer refused (BREW: 501; a raw target it does not take: 400) shows
# nothing of what was sent ("-": none of it is trusted), but the client's address.
begin "--log: every line of stdout is a common-log-format line (refused heads as \"-\")"
line='([A-Z]+ [^"]* HTTP/1\.[01]|-)" [0-9]{3} ([0-9]+|-)$'
n=$(grep -Evc "$clf$line" "$work/main.out")
[ "$n" = 0 ] || no "$n other lines, such as: $(grep -Ev "$clf$line" "$work/main.out" | head -n 3 | cat -v)"
grep -Eq "$clf"'-" 501 -$' "$work/main.out" || no "no line for the refused BREW"
finish

# ---------------------------------------------------------------------------------------
# A second server: --no-listing, --cache-control, --cache, one worker, DIR defaulted to ".".
start_cwd=$root start nolist 0 --bind 127.0.0.1 --workers 1 --no-listing \
	--cache-control 'public, max-age=60' --cache 16 ||
	fatal "the --no-listing server did not start: $(cat "$work/nolist.err")"
U=http://127.0.0.1:$port
begin "DIR defaults to '.': GET /hello.txt"
req nl "$U/hello.txt"
want_status 200
want_body_file "$root/hello.txt"
want_hdr 'Cache-Control' 'public, max-age=60'
finish
begin "--no-listing: / and /sub/ are 403, /site/ still serves its index.html"
req nl "$U/"
want_status 403
req nl "$U/sub/"
want_status 403
req nl "$U/site/"
want_status 200
want_body_file "$root/site/index.html"
finish
begin "SIGTERM: exit 0"
show=
stop nolist 3
[ "$stop_status" = 0 ] || no "exit status $stop_status"
finish

# ---------------------------------------------------------------------------------------
# HTTPS, once per backend.
if [ ${#backends[@]} = 0 ]; then
	echo "skip: HTTPS (no TLS backend given on the command line)"
elif ! command -v openssl >/dev/null; then
	echo "skip: HTTPS (no openssl command to make the certificates)"
else
	sh "$here/../tls/make-certs.sh" "$work/certs" >/dev/null 2>&1 ||
		fatal "tests/tls/make-certs.sh failed"
	certs=$work/certs
	printf 'this is not a key\n' >"$work/bad.key"
fi
for b in "${backends[@]}"; do
	[ -n "${certs:-}" ] || break
	begin "[$b] a bad key file exits 1 naming it"
	run_exit badkey 5 "$root" --bind 127.0.0.1 --port "$free" --https-port $((free + 1)) \
		--tls-cert "$certs/server.pem" --tls-key "$work/bad.key" --tls-backend "$b"
	[ "$run_status" = 1 ] || no "exit status $run_status, expected 1"
	grep -q bad.key "$R/badkey.err" || no "stderr does not name it: $(head -c 300 "$R/badkey.err")"
	finish

	start "tls-$b" 1 "$root" --bind 127.0.0.1 --workers 2 --tls-cert "$certs/server.pem" \
		--tls-key "$certs/server.key" --tls-backend "$b" || {
		begin "[$b] the HTTPS server starts"
		no "it did not: $(cat "$work/tls-$b.err")"
		continue
	}
	U=http://127.0.0.1:$port
	S=https://localhost:$tport
	tc=(--cacert "$certs/ca.pem" --resolve "localhost:$tport:127.0.0.1")
	begin "[$b] the serving line names the http and https URLs"
	line=$(grep "giong-serve: serving" "$work/tls-$b.err")
	[[ $line == *"http://127.0.0.1:$port/"* ]] || no "no http://127.0.0.1:$port/ in: $line"
	[[ $line == *"https://"*":$tport/"* ]] || no "no https://...:$tport/ in: $line"
	finish
	for v in "" "--tlsv1.2 --tls-max 1.2" "--tlsv1.3"; do
		begin "[$b] GET /hello.txt over HTTPS ${v:-(default version)}, verified"
		# shellcheck disable=SC2086 # v is curl options
		req th "${tc[@]}" $v "$S/hello.txt"
		want_status 200
		want_body_file "$root/hello.txt"
		want_hdr ETag "$etag_hello"
		finish
	done
	begin "[$b] 2 MiB byte-exact, then hello.txt and r.bin on the same connection"
	st=$(curl -sS --max-time 10 "${tc[@]}" -w '%{http_code} ' -o "$R/t1.b" "$S/mid.bin" \
		-o "$R/t2.b" "$S/hello.txt" -o "$R/t3.b" "$S/r.bin" 2>&1)
	[ "$st" = "200 200 200 " ] || no "statuses '$st'"
	cmp -s "$R/t1.b" "$root/mid.bin" || no "mid.bin differs"
	cmp -s "$R/t2.b" "$root/hello.txt" || no "hello.txt differs"
	cmp -s "$R/t3.b" "$root/r.bin" || no "r.bin differs"
	finish
	begin "[$b] the listing of / over HTTPS"
	req tl "${tc[@]}" "$S/"
	want_status 200
	grep -q 'href="\(/\)\?hello\.txt"' "$R/tl.b" || no "no link to hello.txt"
	finish
	begin "[$b] the last 8 bytes of the 1 GiB file over HTTPS; HEAD's Content-Length"
	req tr "${tc[@]}" -H "Range: bytes=-8" "$S/big.bin"
	want_status 206
	want_hdr Content-Range "bytes 1073741816-1073741823/1073741824"
	want_body $'THE-END\n'
	req tr -I "${tc[@]}" "$S/big.bin"
	want_status 200
	want_hdr Content-Length 1073741824
	finish
	begin "[$b] the .gz sibling and a 304 over HTTPS"
	req tg "${tc[@]}" -H "Accept-Encoding: gzip" "$S/a.txt"
	want_status 200
	want_hdr Content-Encoding gzip
	want_body_file "$root/a.txt.gz"
	req tg "${tc[@]}" -H "If-None-Match: $etag_hello" "$S/hello.txt"
	want_status 304
	want_empty_body
	finish
	begin "[$b] plain HTTP on the other port at the same time"
	req tp "$U/hello.txt"
	want_status 200
	want_body_file "$root/hello.txt"
	finish
	begin "[$b] a client that does not trust the CA is refused (curl 60), and the server goes on"
	show=
	curl -sS --max-time 10 -o /dev/null --resolve "localhost:$tport:127.0.0.1" "$S/hello.txt" 2>/dev/null
	rc=$?
	[ $rc = 60 ] || no "curl without --cacert exited $rc"
	req th "${tc[@]}" "$S/hello.txt"
	want_status 200
	finish
	begin "[$b] SIGTERM: exit 0, 'giong-serve: stopped'"
	show=
	stop "tls-$b" 3
	[ "$stop_status" = 0 ] || no "exit status $stop_status"
	grep -q "giong-serve: stopped" "$work/tls-$b.err" || no "no 'giong-serve: stopped' on stderr"
	finish

	start "self-$b" 1 "$root" --bind 127.0.0.1 --workers 2 --self-signed --tls-backend "$b" || {
		begin "[$b] the --self-signed server starts"
		no "it did not: $(cat "$work/self-$b.err")"
		continue
	}
	S=https://127.0.0.1:$tport
	begin "[$b] --self-signed: curl -k gets the files"
	req ts -k "$S/hello.txt"
	want_status 200
	want_body_file "$root/hello.txt"
	finish
	begin "[$b] --self-signed: the printed SHA-256 fingerprint is the presented certificate's"
	show=
	line=$(grep -i fingerprint "$work/self-$b.err" | head -n 1)
	fp=$(printf '%s' "$line" | grep -oE '([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}|[0-9A-Fa-f]{64}' | head -n 1)
	pr=$(timeout 10 openssl s_client -connect "127.0.0.1:$tport" -servername localhost </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 2>/dev/null)
	pfp=$(printf '%s' "$pr" | grep -oE '([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}' | head -n 1)
	if [ -z "$fp" ]; then
		no "no SHA-256 fingerprint on stderr; the line: '$line'"
	elif [ -z "$pfp" ]; then
		no "openssl s_client got no certificate: '$pr'"
	elif [ "$(printf '%s' "$fp" | tr -d : | tr '[:lower:]' '[:upper:]')" != "$(printf '%s' "$pfp" | tr -d :)" ]; then
		no "printed $fp, presented $pfp"
	fi
	finish
	begin "[$b] --self-signed: SIGTERM: exit 0"
	stop "self-$b" 3
	[ "$stop_status" = 0 ] || no "exit status $stop_status"
	finish
done

[ "$failures" = 0 ] || exit 1
echo "ok: giong-serve end to end${backends[*]:+ (HTTPS with ${backends[*]})}"
