// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Listing 1 of the DPI paper (Alonso et al., CIDR 2019), typed in exactly as
// printed (line numbers dropped), inside main().  Run with DPI_CLUSTER naming
// a cluster spec whose node 0 runs a DPI node (e.g. `dpi --id 0 cat buffer`).
#include <dpi/dpi.h>
using namespace std;

// clang-format off
int main()
{
string buffer_name = "buffer";
char data1[] = "Hello ";
char data2[] = "World!";
int rcv_node_id = 0; //ID is mapped to a concrete node in cluster spcc
DPI_Context context;
DPI_Init(context);
DPI_Create_Buffer(buffer_name, rcv_node_id, context);
DPI_Append(buffer_name, (void*)data1, sizeof(data1), context);
DPI_Flush_Buffer(buffer_name);
DPI_Append(buffer_name, (void*)data2, sizeof(data2), context);
DPI_Flush_Buffer(buffer_name);
}
// clang-format on
