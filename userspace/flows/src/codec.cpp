// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Built-in codecs: lz4 and zstd compression, XChaCha20-Poly1305 AEAD.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <cstring>
#include <lz4.h>
#include <sodium.h>
#include <zstd.h>

namespace dpi::flow
{

namespace
{
constexpr size_t max_plain = 1U << 30;

void put_len(Bytes &out, size_t n)
{
	for (int i = 0; i < 4; i++)
		out.push_back(static_cast<std::byte>(n >> (8 * i)));
}
size_t get_len(View in)
{
	if (in.size() < 4)
		throw Error(Errc::protocol, "compressed block shorter than its length prefix");
	size_t n = 0;
	for (int i = 0; i < 4; i++)
		n |= static_cast<size_t>(in[i]) << (8 * i);
	if (n > max_plain)
		throw Error(Errc::protocol, "compressed block claims " + std::to_string(n) + " bytes");
	return n;
}

// lz4 block format with a 4-byte plain length prefix.
class Lz4 final : public Codec
{
public:
	void encode(View in, Bytes &out, View) const override
	{
		if (in.size() > max_plain)
			throw Error(Errc::too_large, "lz4: input too large");
		out.clear();
		put_len(out, in.size());
		int bound = LZ4_compressBound(static_cast<int>(in.size()));
		out.resize(4 + static_cast<size_t>(bound));
		int n = LZ4_compress_default(reinterpret_cast<const char *>(in.data()),
		                             reinterpret_cast<char *>(out.data() + 4), static_cast<int>(in.size()),
		                             bound);
		if (n <= 0 && !in.empty())
			throw Error(Errc::system, "lz4 compression failed");
		out.resize(4 + static_cast<size_t>(n));
	}
	void decode(View in, Bytes &out, View) const override
	{
		size_t n = get_len(in);
		out.assign(n, std::byte{0});
		int r = LZ4_decompress_safe(reinterpret_cast<const char *>(in.data() + 4),
		                            reinterpret_cast<char *>(out.data()), static_cast<int>(in.size() - 4),
		                            static_cast<int>(n));
		if (r < 0 || static_cast<size_t>(r) != n)
			throw Error(Errc::protocol, "lz4: corrupt block");
	}
	[[nodiscard]] const char *name() const noexcept override { return "lz4"; }
};

class Zstd final : public Codec
{
public:
	explicit Zstd(int level) : level_(level) {}
	void encode(View in, Bytes &out, View) const override
	{
		out.resize(ZSTD_compressBound(in.size()));
		size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), level_);
		if (ZSTD_isError(n))
			throw Error(Errc::system, std::string("zstd: ") + ZSTD_getErrorName(n));
		out.resize(n);
	}
	void decode(View in, Bytes &out, View) const override
	{
		unsigned long long n = ZSTD_getFrameContentSize(in.data(), in.size());
		if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n > max_plain)
			throw Error(Errc::protocol, "zstd: not a frame with a known size");
		out.resize(static_cast<size_t>(n));
		size_t r = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
		if (ZSTD_isError(r) || r != n)
			throw Error(Errc::protocol, std::string("zstd: corrupt frame: ") +
			                                    (ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short"));
	}
	[[nodiscard]] const char *name() const noexcept override { return "zstd"; }

private:
	int level_;
};

class Aead final : public Codec
{
public:
	explicit Aead(View key)
	{
		if (key.size() != crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
			throw Error(Errc::invalid_argument, "AEAD key must be 32 bytes");
		std::memcpy(key_, key.data(), sizeof(key_));
	}
	~Aead() override { sodium_memzero(key_, sizeof(key_)); }
	Aead(const Aead &) = delete;
	Aead &operator=(const Aead &) = delete;
	void encode(View in, Bytes &out, View ad) const override
	{
		constexpr size_t nb = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
		out.resize(nb + in.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES);
		auto *o = reinterpret_cast<unsigned char *>(out.data());
		randombytes_buf(o, nb);
		unsigned long long clen = 0;
		crypto_aead_xchacha20poly1305_ietf_encrypt(
		        o + nb, &clen, reinterpret_cast<const unsigned char *>(in.data()), in.size(),
		        reinterpret_cast<const unsigned char *>(ad.data()), ad.size(), nullptr, o, key_);
		out.resize(nb + clen);
	}
	void decode(View in, Bytes &out, View ad) const override
	{
		constexpr size_t nb = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
		if (in.size() < nb + crypto_aead_xchacha20poly1305_ietf_ABYTES)
			throw Error(Errc::protocol, "AEAD: message shorter than nonce and tag");
		const auto *i = reinterpret_cast<const unsigned char *>(in.data());
		out.resize(in.size() - nb - crypto_aead_xchacha20poly1305_ietf_ABYTES);
		unsigned long long mlen = 0;
		if (crypto_aead_xchacha20poly1305_ietf_decrypt(
		            reinterpret_cast<unsigned char *>(out.data()), &mlen, nullptr, i + nb, in.size() - nb,
		            reinterpret_cast<const unsigned char *>(ad.data()), ad.size(), i, key_) != 0)
			throw Error(Errc::protocol, "AEAD: authentication failed (tampered or wrong key)");
		out.resize(mlen);
	}
	[[nodiscard]] const char *name() const noexcept override { return "xchacha20poly1305"; }

private:
	unsigned char key_[crypto_aead_xchacha20poly1305_ietf_KEYBYTES]{};
};
} // namespace

std::shared_ptr<const Codec> lz4_codec()
{
	return std::make_shared<Lz4>();
}

std::shared_ptr<const Codec> zstd_codec(int level)
{
	return std::make_shared<Zstd>(level);
}

std::shared_ptr<const Codec> aead_codec(View key)
{
	if (sodium_init() < 0)
		throw Error(Errc::system, "sodium_init failed");
	return std::make_shared<Aead>(key);
}

} // namespace dpi::flow
