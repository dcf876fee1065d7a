# SPDX-License-Identifier: MIT
#
# ports.sh - sourced (sh or bash) by the test scripts that choose a TCP port before a server
# binds it: port_base, the first of the ports this script tries (its own run of them, the
# script adds offsets). Below the ephemeral ports (32768-60999), which other tests'
# connections hold; the PID times 131 keeps the scripts of adjacent PIDs, started together
# under ctest -j2, 131 ports apart. A port found in use is still tried again by the script:
# the tools refuse one another server holds (docs/testing.md).
port_base=$((20000 + ($$ * 131) % 11900))
