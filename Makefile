# Thin wrapper around CMake/CTest/CPack. All the logic lives in CMakeLists.txt.
#   make run       install deps, build build/ (Release), run giong-serve on docs/ (ARGS=...)
#   make test      install deps, build build/, run every test (ctest)
#   make asan      the same in build-asan/ with ASan+UBSan (Debug)
#   make tsan      the same in build-tsan/ with TSan (Debug)
#   make package   the Debian packages, into build/packages/
#   make format    clang-format -i the C sources and headers (scripts/check format checks them)
#   make clean     remove the build directories
# CMAKE_ARGS="-DGIONG_WERROR=ON ..." is passed to every configure; CTEST_ARGS to ctest.

BUILD      ?= build
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
CTEST_ARGS ?=
JOBS       ?= $(shell nproc)
ARGS       ?=
CLANG_FORMAT ?= clang-format
# The files scripts/check format checks (its format_files()): C only, no .S, no C++.
FORMAT_DIRS = libgiong-*/src libgiong-*/include private tests programs examples $(wildcard libgiong-*/*/src libgiong-*/*/include)

MAKEFLAGS += --no-print-directory

.PHONY: all deps configure build run run-https test asan tsan package format clean

all: build

deps:
	@scripts/install-deps

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

run: build
	@if [ -x $(BUILD)/bin/serve ]; then \
		echo "Try: curl http://127.0.0.1:8080/"; \
		echo "     curl -k https://127.0.0.1:8443/http.md"; \
		echo "     curl --http2 -k https://127.0.0.1:8443/             (HTTP/2 by ALPN)"; \
		echo "     curl --http2-prior-knowledge http://127.0.0.1:8080/ (HTTP/2 without TLS: h2c)"; \
		exec $(BUILD)/bin/serve docs --self-signed $(ARGS); \
	else \
		echo "$(BUILD)/bin/serve is not built yet; programs in $(BUILD)/bin:"; \
		ls -1 $(BUILD)/bin 2>/dev/null || echo "  (none)"; \
	fi

# HTTP on 8080 and HTTPS on 8443, with a test CA and a localhost certificate made into
# $(BUILD)/tls-certs (tests/tls/make-certs.sh): curl --cacert $(BUILD)/tls-certs/ca.pem
# https://localhost:8443/json. TLS_BACKEND=openssl for the other backend.
TLS_BACKEND ?= wolfssl
run-https: build
	@sh tests/tls/make-certs.sh $(BUILD)/tls-certs
	exec $(BUILD)/bin/http --tls-cert $(BUILD)/tls-certs/server.pem \
		--tls-key $(BUILD)/tls-certs/server.key --tls-backend $(TLS_BACKEND) $(ARGS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS) $(CTEST_ARGS)

asan:
	$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug \
		CMAKE_ARGS='$(CMAKE_ARGS) -DGIONG_SANITIZE=address,undefined'

tsan: # scripts/tsan.supp: the uninstrumented TLS libraries' own calls (why: in the file)
	TSAN_OPTIONS="suppressions=$(CURDIR)/scripts/tsan.supp $$TSAN_OPTIONS" \
		$(MAKE) test BUILD=build-tsan BUILD_TYPE=Debug CMAKE_ARGS='$(CMAKE_ARGS) -DGIONG_SANITIZE=thread'

package: build
	rm -f $(BUILD)/packages/*.deb
	cd $(BUILD) && cpack -G DEB

format:
	find $(FORMAT_DIRS) -type f \( -name '*.c' -o -name '*.h' \) -print0 | \
		xargs -0 $(CLANG_FORMAT) -i

clean:
	rm -rf build build-asan build-tsan
