#!/bin/sh
# make-certs.sh DIR - the certificates the tls tests use, made fresh with the openssl
# command (nothing secret is kept in the repository):
#   ca.pem                 a test CA (ECDSA P-256); ca-dir/ the same, hashed (c_rehash)
#   server.pem/.key        localhost, 127.0.0.1, ::1 (ECDSA P-256, signed by the CA)
#   server-rsa.pem/.key    localhost (RSA 2048, signed by the CA)
#   sni.pem/.key           other.test and *.wild.test (ECDSA, signed by the CA)
#   expired.pem/.key       localhost, valid only in 2020 (signed by the CA)
#   untrusted.pem/.key     localhost, signed by another CA nobody trusts
#   client.pem/.key        a client certificate (clientAuth, signed by the CA)
# Idempotent: a DIR that already has them all is left alone.
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
[ -f done ] && exit 0

ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

ec ca.key
openssl req -x509 -new -key ca.key -subj "/CN=giong test CA" -days 3650 -out ca.pem \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
ec other-ca.key
openssl req -x509 -new -key other-ca.key -subj "/CN=untrusted CA" -days 3650 -out other-ca.pem \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign

# sign NAME CA_PREFIX SAN [EXTKEYUSAGE]
sign() {
	openssl req -new -key "$1.key" -subj "/CN=$1" -out "$1.csr"
	printf 'subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n' \
		"$3" "${4:-serverAuth}" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 825 \
		-extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
ec server.key
sign server ca "DNS:localhost,IP:127.0.0.1,IP:::1"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out server-rsa.key 2>/dev/null
sign server-rsa ca "DNS:localhost"
ec sni.key
sign sni ca "DNS:other.test,DNS:*.wild.test"
ec untrusted.key
sign untrusted other-ca "DNS:localhost"
ec client.key
sign client ca "DNS:client.test" clientAuth

# expired: openssl x509 -req cannot date a certificate in the past; openssl ca can.
ec expired.key
openssl req -new -key expired.key -subj "/CN=localhost" -out expired.csr
mkdir -p cadb
: >cadb/index.txt
echo 01 >cadb/serial
cat >cadb/ca.cnf <<CNF
[ca]
default_ca = test
[test]
dir = cadb
database = cadb/index.txt
serial = cadb/serial
new_certs_dir = cadb
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = leaf
[any]
commonName = supplied
[leaf]
subjectAltName = DNS:localhost
basicConstraints = CA:FALSE
CNF
openssl ca -batch -config cadb/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr \
	-startdate 20200101000000Z -enddate 20200201000000Z -out expired.pem 2>/dev/null
# ca-dir: the CA by subject hash, as giong_tls_config_ca_dir() wants.
mkdir -p ca-dir
cp ca.pem "ca-dir/$(openssl x509 -hash -noout -in ca.pem).0"
rm -f ./*.csr ./*.ext ./*.srl
touch done
