// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The paper's C-style memory API on top of dpi::Node.
#include <dpi/dpi.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

namespace
{

thread_local std::string last_error;

// One runtime per process, shared by every DPI_Context.
std::mutex g_mu;
std::weak_ptr<dpi::Node> g_node;
std::set<DPI_Context *> g_contexts;

int fail(dpi::Errc code, const std::string &msg)
{
	last_error = msg;
	return static_cast<int>(code);
}

template <class F> int guarded(F &&f)
{
	try {
		f();
		last_error.clear();
		return DPI_SUCCESS;
	} catch (const dpi::Error &e) {
		return fail(e.code(), e.what());
	} catch (const std::bad_alloc &) {
		return fail(dpi::Errc::resources, "out of memory");
	} catch (const std::exception &e) {
		return fail(dpi::Errc::system, e.what());
	}
}

void need_init(DPI_Context &ctx)
{
	if (!ctx.node)
		throw dpi::Error(dpi::Errc::not_initialized, "call DPI_Init first");
}

dpi::Appender &appender_for(DPI_Context &ctx, const std::string &name)
{
	need_init(ctx);
	auto it = ctx.appenders.find(name);
	if (it == ctx.appenders.end())
		it = ctx.appenders.emplace(name, ctx.node->appender(name)).first;
	return *it->second;
}

dpi::Region &region_for(DPI_Context &ctx, const std::string &name)
{
	need_init(ctx);
	auto it = ctx.regions.find(name);
	if (it == ctx.regions.end())
		it = ctx.regions.emplace(name, ctx.node->region(name)).first;
	return *it->second;
}

int init_with(DPI_Context &ctx, const std::function<dpi::Options()> &make)
{
	return guarded([&] {
		std::lock_guard<std::mutex> g(g_mu);
		if (ctx.node)
			return;
		auto node = g_node.lock();
		if (!node) {
			node = dpi::Node::start(make());
			g_node = node;
		}
		ctx.node = node;
		g_contexts.insert(&ctx);
	});
}

long env_long(const char *name, long dflt)
{
	const char *v = std::getenv(name);
	if (!v || !*v)
		return dflt;
	char *end = nullptr;
	long x = std::strtol(v, &end, 10);
	if (*end)
		throw dpi::Error(dpi::Errc::invalid_argument, std::string(name) + "='" + v + "' is not an integer");
	return x;
}

} // namespace

DPI_Context::~DPI_Context()
{
	if (node)
		DPI_Finalize(*this);
}

int DPI_Init(DPI_Context &context)
{
	return init_with(context, [] {
		dpi::Options o;
		auto l = dpi::launch_from_env(); // $DPI_CLUSTER + $DPI_NODE_ID, else PMIx
		o.spec = std::move(l.spec);
		o.node_id = l.node_id;
		o.launcher = std::move(l.session);
		o.op_timeout = std::chrono::milliseconds(env_long("DPI_TIMEOUT_MS", 0));
		return o;
	});
}

int DPI_Init(DPI_Context &context, const std::string &spec_path, int node_id)
{
	return init_with(context, [&] {
		dpi::Options o;
		o.spec = dpi::ClusterSpec::load(spec_path);
		o.node_id = node_id;
		o.op_timeout = std::chrono::milliseconds(env_long("DPI_TIMEOUT_MS", 0));
		return o;
	});
}

int DPI_Init(DPI_Context &context, const dpi::Options &options)
{
	return init_with(context, [&] { return options; });
}

int DPI_Create_Buffer(const std::string &name, int node_id, DPI_Context &context)
{
	return DPI_Create_Buffer(name, node_id, context, dpi::BufferOptions{});
}

int DPI_Create_Buffer(const std::string &name, int node_id, DPI_Context &context, const dpi::BufferOptions &options)
{
	return guarded([&] {
		need_init(context);
		context.node->create_buffer(name, node_id, options);
	});
}

int DPI_Append(const std::string &name, const void *data, size_t size, DPI_Context &context)
{
	return guarded([&] {
		if (!data && size)
			throw dpi::Error(dpi::Errc::invalid_argument, "null data pointer");
		std::lock_guard<std::mutex> g(context.mu);
		appender_for(context, name).append({static_cast<const std::byte *>(data), size});
	});
}

int DPI_Flush_Buffer(const std::string &name, DPI_Context &context)
{
	return guarded([&] {
		need_init(context);
		std::lock_guard<std::mutex> g(context.mu);
		auto it = context.appenders.find(name);
		if (it != context.appenders.end())
			it->second->flush();
	});
}

int DPI_Flush_Buffer(const std::string &name)
{
	std::vector<DPI_Context *> ctxs;
	{
		std::lock_guard<std::mutex> g(g_mu);
		ctxs.assign(g_contexts.begin(), g_contexts.end());
	}
	if (ctxs.empty())
		return fail(dpi::Errc::not_initialized, "DPI_Flush_Buffer('" + name + "'): no initialized DPI_Context");
	int rc = DPI_SUCCESS;
	std::string err;
	for (auto *c : ctxs) {
		int r = DPI_Flush_Buffer(name, *c);
		if (r != DPI_SUCCESS && rc == DPI_SUCCESS) {
			rc = r;
			err = last_error;
		}
	}
	last_error = err;
	return rc;
}

int DPI_Write(const std::string &name, size_t offset, const void *data, size_t size, DPI_Context &context)
{
	return guarded([&] {
		std::lock_guard<std::mutex> g(context.mu);
		region_for(context, name).write(offset, {static_cast<const std::byte *>(data), size});
	});
}

int DPI_Read(const std::string &name, size_t offset, void *data, size_t size, DPI_Context &context)
{
	return guarded([&] {
		std::lock_guard<std::mutex> g(context.mu);
		region_for(context, name).read(offset, {static_cast<std::byte *>(data), size});
	});
}

int DPI_Scatter(const std::vector<std::string> &names, const void *data, size_t size, DPI_Context &context)
{
	return guarded([&] {
		if (names.empty())
			throw dpi::Error(dpi::Errc::invalid_argument, "DPI_Scatter needs at least one buffer");
		std::lock_guard<std::mutex> g(context.mu);
		const auto *p = static_cast<const std::byte *>(data);
		size_t part = size / names.size();
		for (size_t i = 0; i < names.size(); ++i) {
			size_t n = i + 1 == names.size() ? size - part * i : part;
			appender_for(context, names[i]).append({p + part * i, n});
		}
	});
}

int DPI_Gather(const std::vector<std::string> &names, size_t offset, void *data, size_t size_each, DPI_Context &context)
{
	return guarded([&] {
		if (names.empty())
			throw dpi::Error(dpi::Errc::invalid_argument, "DPI_Gather needs at least one buffer");
		std::lock_guard<std::mutex> g(context.mu);
		auto *p = static_cast<std::byte *>(data);
		for (size_t i = 0; i < names.size(); ++i)
			region_for(context, names[i]).read(offset, {p + i * size_each, size_each});
	});
}

int DPI_Finalize(DPI_Context &context)
{
	if (!context.node)
		return fail(dpi::Errc::not_initialized, "DPI_Finalize on a context that is not initialized");
	int rc = DPI_SUCCESS;
	std::string err;
	{
		std::lock_guard<std::mutex> g(context.mu);
		for (auto &entry : context.appenders) {
			auto &app = *entry.second;
			int r = guarded([&] { app.close(); });
			if (r != DPI_SUCCESS && rc == DPI_SUCCESS) {
				rc = r;
				err = last_error;
			}
		}
		context.appenders.clear();
		context.regions.clear();
	}
	{
		std::lock_guard<std::mutex> g(g_mu);
		g_contexts.erase(&context);
		context.node.reset(); // the runtime stops with its last user
	}
	last_error = err;
	return rc;
}

const char *DPI_Error_String(int code)
{
	return dpi::errc_message(static_cast<dpi::Errc>(code));
}

const char *DPI_Last_Error()
{
	return last_error.c_str();
}
