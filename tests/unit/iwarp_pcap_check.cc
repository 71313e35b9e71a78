// iwarp-pcap-check FILE.pcap: validate every iWARP stream in a capture
// with the wire core (MPA negotiation, FPDUs, markers, CRC, DDP/RDMAP
// headers, DDP sequencing).  Exit status 0 if no errors were found.
#include <cstdio>

#include "pcap_check.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE.pcap\n", argv[0]);
		return 2;
	}
	wirecheck::Report rep;
	bool ok = wirecheck::check_pcap(argv[1], rep);
	fputs(wirecheck::format(rep).c_str(), stdout);
	return ok && rep.error_count() == 0 ? 0 : 1;
}
