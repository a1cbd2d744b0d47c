"""PyTorch Geometric graph neural networks for probe_zoo.py's "pyg ..." rows: graph classification
as PyG users batch graphs (the disjoint union of a batch's graphs, one edge list, a `batch` vector
naming each node's graph, `global_*_pool` over it). Every sample is one graph of NODES nodes with
FEATURES features a node on one fixed topology (a sensor network's: the signals change, the
graph does not), so the union's edge list and batch vector are buffers of the model, sized for
BATCH graphs: the export has a fixed batch. Two message-passing layers of each kind, a pooling, a
linear head, 10 classes; random weights. Needs PyTorch 2.x with torch_geometric installed (the
benches' venv)."""

BATCH, NODES, FEATURES, HIDDEN = 16, 24, 8, 16


def pyg_available():
    try:
        import torch_geometric  # noqa: F401
        return True
    except Exception:  # (not installed, or not for this PyTorch)
        return False


def _edges():
    """The fixed topology: a ring (every node reached) and 48 random directed edges."""
    import torch
    g = torch.Generator().manual_seed(0)
    ring = torch.arange(NODES)
    src = torch.cat([ring, torch.randint(0, NODES, (48,), generator=g)])
    dst = torch.cat([(ring + 1) % NODES, torch.randint(0, NODES, (48,), generator=g)])
    return torch.stack([src, dst])


def classifier(conv, pool="mean", width=None):
    """Two layers `conv(in, out)` (the second's input `width`, when the first's output is wider
    than HIDDEN: attention heads concatenated), ReLU after each, `pool` over each graph's nodes."""
    import torch
    import torch.nn as nn
    import torch_geometric.nn as gnn

    class GraphClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            edges = _edges()
            self.register_buffer("edge_index", torch.cat(
                [edges + b * NODES for b in range(BATCH)], dim=1))
            self.register_buffer("batch", torch.arange(BATCH).repeat_interleave(NODES))
            self.conv1 = conv(FEATURES, HIDDEN)
            self.conv2 = conv(width or HIDDEN, HIDDEN)
            self.head = nn.Linear(width or HIDDEN, 10)
            self.pool = {"mean": gnn.global_mean_pool, "max": gnn.global_max_pool,
                         "add": gnn.global_add_pool}[pool]

        def forward(self, x):  # (BATCH, NODES, FEATURES)
            h = x.reshape(BATCH * NODES, FEATURES)
            h = torch.relu(self.conv1(h, self.edge_index))
            h = torch.relu(self.conv2(h, self.edge_index))
            return self.head(self.pool(h, self.batch, size=BATCH))

    return GraphClassifier()


def _mlp(i, o):
    import torch.nn as nn
    return nn.Sequential(nn.Linear(i, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, o))


# The rows whose TorchScript export fails (scatter_reduce's max: PyTorch's exporter refuses it) or
# is invalid (GATConv's, TransformerConv's, GENConv's softmax over edges: an If whose branches'
# shapes ONNX's checker rejects) are exported by the torch.export-based exporter ("(torch.export)").


def _builders():
    import torch_geometric.nn as gnn
    heads = 4
    return {
        "gcn": lambda: classifier(gnn.GCNConv),
        "gcn (max pool) (torch.export)": lambda: classifier(gnn.GCNConv, pool="max"),
        "graphsage": lambda: classifier(gnn.SAGEConv),
        "graphsage (max aggregation) (torch.export)": lambda: classifier(
            lambda i, o: gnn.SAGEConv(i, o, aggr="max")),
        "gin": lambda: classifier(lambda i, o: gnn.GINConv(_mlp(i, o)), pool="add"),
        "gat (torch.export)": lambda: classifier(lambda i, o: gnn.GATConv(i, o // heads, heads=heads)),
        "gatv2 (torch.export)": lambda: classifier(lambda i, o: gnn.GATv2Conv(i, o // heads, heads=heads)),
        "graph transformer (torch.export)": lambda: classifier(
            lambda i, o: gnn.TransformerConv(i, o // heads, heads=heads)),
        "graphconv": lambda: classifier(gnn.GraphConv),
        "chebnet": lambda: classifier(lambda i, o: gnn.ChebConv(i, o, K=3)),
        "edgeconv (torch.export)": lambda: classifier(lambda i, o: gnn.EdgeConv(_mlp(2 * i, o))),
        "resgated": lambda: classifier(gnn.ResGatedGraphConv),
        "tagconv": lambda: classifier(gnn.TAGConv),
        "sgconv": lambda: classifier(lambda i, o: gnn.SGConv(i, o, K=2)),
        "genconv (softmax aggregation) (torch.export)": lambda: classifier(gnn.GENConv),
    }


def builders():
    """row name (after "pyg ") -> constructor; empty without torch_geometric."""
    return _builders() if pyg_available() else {}
