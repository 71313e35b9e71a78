// Name tables used by the dissector and logs: every code the RFCs define
// has a name, undefined ones have none.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <iwarp/rdmap.h>

namespace {

struct Code {
	unsigned layer, etype, ecode;
};

// Written out from RFC 5040 section 7, RFC 5041 section 7, RFC 5044
// section 8 and RFC 6581 section 8, independently of the header.
const Code kDefined[] = {
	// RDMAP, local catastrophic
	{0, 0, 0x00},
	// RDMAP, remote protection
	{0, 1, 0x00}, {0, 1, 0x01}, {0, 1, 0x02}, {0, 1, 0x03}, {0, 1, 0x04},
	{0, 1, 0x09}, {0, 1, 0xff},
	// RDMAP, remote operation
	{0, 2, 0x05}, {0, 2, 0x06}, {0, 2, 0x07}, {0, 2, 0x08}, {0, 2, 0x09},
	{0, 2, 0xff},
	// DDP, local catastrophic
	{1, 0, 0x00},
	// DDP, tagged buffer
	{1, 1, 0x00}, {1, 1, 0x01}, {1, 1, 0x02}, {1, 1, 0x03}, {1, 1, 0x04},
	// DDP, untagged buffer
	{1, 2, 0x01}, {1, 2, 0x02}, {1, 2, 0x03}, {1, 2, 0x04}, {1, 2, 0x05},
	{1, 2, 0x06},
	// LLP (MPA)
	{2, 0, 0x01}, {2, 0, 0x02}, {2, 0, 0x03}, {2, 0, 0x04},
	{2, 0, 0x05}, {2, 0, 0x06}, {2, 0, 0x07},
};

bool is_defined(unsigned layer, unsigned etype, unsigned ecode)
{
	for (const Code &c : kDefined)
		if (c.layer == layer && c.etype == etype && c.ecode == ecode)
			return true;
	return false;
}

} // namespace

TEST(Names, EveryDefinedTerminateCodeHasAName)
{
	for (const Code &c : kDefined) {
		SCOPED_TRACE(testing::Message() << c.layer << "/" << c.etype << "/" << c.ecode);
		ASSERT_NE(iwarp_term_layer_name(c.layer), nullptr);
		ASSERT_NE(iwarp_term_etype_name(c.layer, c.etype), nullptr);
		const char *n = iwarp_term_ecode_name(c.layer, c.etype, c.ecode);
		ASSERT_NE(n, nullptr);
		EXPECT_GT(std::string(n).size(), 3u);
	}
}

TEST(Names, UndefinedTerminateCodesHaveNoName)
{
	for (unsigned layer = 0; layer < 16; layer++)
		for (unsigned etype = 0; etype < 16; etype++)
			for (unsigned ecode = 0; ecode < 256; ecode++) {
				const char *n = iwarp_term_ecode_name(layer, etype, ecode);
				EXPECT_EQ(n != nullptr, is_defined(layer, etype, ecode))
					<< layer << "/" << etype << "/" << ecode;
			}
	EXPECT_EQ(iwarp_term_layer_name(3), nullptr);
	EXPECT_EQ(iwarp_term_etype_name(0, 3), nullptr);
	EXPECT_EQ(iwarp_term_etype_name(2, 1), nullptr);
	EXPECT_NE(iwarp_term_etype_name(1, 3), nullptr); // reserved for LLP
}

TEST(Names, CodesWithinAnErrorTypeAreDistinct)
{
	for (unsigned layer = 0; layer < 3; layer++)
		for (unsigned etype = 0; etype < 4; etype++) {
			std::set<std::string> seen;
			for (const Code &c : kDefined)
				if (c.layer == layer && c.etype == etype) {
					EXPECT_TRUE(seen.insert(iwarp_term_ecode_name(layer, etype, c.ecode))
							    .second)
						<< layer << "/" << etype << "/" << c.ecode;
				}
		}
}

TEST(Names, Opcodes)
{
	std::set<std::string> seen;
	for (unsigned op = 0; op < 12; op++) {
		std::string n = iwarp_rdmap_opcode_name(op);
		EXPECT_NE(n, "Reserved") << op;
		EXPECT_TRUE(seen.insert(n).second) << n;
	}
	for (unsigned op = 12; op < 16; op++)
		EXPECT_STREQ(iwarp_rdmap_opcode_name(op), "Reserved");
	EXPECT_STREQ(iwarp_rdmap_opcode_name(IWARP_OP_SEND_SE_INVALIDATE),
		     "Send with Solicited Event and Invalidate");
	EXPECT_STREQ(iwarp_atomic_opcode_name(IWARP_AOP_FETCH_ADD), "FetchAdd");
	EXPECT_STREQ(iwarp_atomic_opcode_name(1), "Reserved");
	EXPECT_STREQ(iwarp_atomic_opcode_name(IWARP_AOP_COMPARE_SWAP), "CmpSwap");
	EXPECT_STREQ(iwarp_atomic_opcode_name(3), "Reserved");
}

TEST(Names, StatusStrings)
{
	std::set<std::string> seen;
	for (int s = 0; s >= IWARP_ERR_MALFORMED; s--) {
		std::string n = iwarp_strerror(s);
		EXPECT_NE(n, "unknown error") << s;
		EXPECT_TRUE(seen.insert(n).second) << n;
	}
	EXPECT_STREQ(iwarp_strerror(-1000), "unknown error");
}

extern "C" int wire_c_smoke(void);

TEST(CApi, FrameMarkStripParseFromC)
{
	EXPECT_EQ(wire_c_smoke(), 0);
}
