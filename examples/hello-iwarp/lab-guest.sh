#!/bin/bash
# hello-iwarp in a 3-guest lab of its own (tests/dissector/capture-interop.sh
# records its golden captures from it; make check runs the same exchanges
# in tests/suites/60-swiwarp-basic.sh's boots).
# Guests 1 and 2 run swiwarp, guest 3 runs upstream siw.
#   port 7471  g2 -> g1  swiwarp <-> swiwarp, "Hello iWARP!"
#   port 7472  g2 -> g1  swiwarp <-> swiwarp, 100000 bytes (multi-segment)
#   port 7473  g3 -> g1  siw initiator -> swiwarp responder
#   port 7474  g2 -> g3  swiwarp initiator -> siw responder
source "$LAB_TOP/tests/lab/lib.sh"
# shellcheck source=examples/hello-iwarp/lab-steps.sh
source "$LAB_TOP/examples/hello-iwarp/lab-steps.sh"
if [ "$LAB_ID" = 3 ]; then
	lab_load_siw
else
	lab_load_swiwarp
fi
rc=$?
[ $rc -eq 0 ] && lab_pass "examples/load-g$LAB_ID" || lab_fail "examples/load-g$LAB_ID" "loader exit $rc"
lab_barrier loaded 600
hello_exchange swiwarp 7471 1 2
hello_exchange swiwarp-100k 7472 1 2 -S 100000 -m "iWARP says hello. "
hello_exchange siw-to-swiwarp 7473 1 3
# Upstream siw as responder: delay the initiator's frames (see
# lab_delay_egress in lib.sh for the siw connection-setup race this avoids).
[ "$LAB_ID" = 2 ] && { lab_delay_egress 100 || echo "could not add the netem delay"; }
hello_exchange swiwarp-to-siw 7474 3 2
lab_finish
