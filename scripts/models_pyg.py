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


# Node classification on one graph (PyG's Cora tutorial, transductive): the whole graph is one
# sample, its node features [1, GRAPH_NODES, GRAPH_FEATURES], a label a node (-100, ignored, for
# the nodes outside the training set); a stochastic block model of GRAPH_CLASSES communities.
GRAPH_NODES, GRAPH_FEATURES, GRAPH_CLASSES = 400, 16, 4


def block_model_edges():
    """The communities' graph: an edge within a community with probability 0.05, across 0.005
    (both directions), and the node of each community, in order of node."""
    import torch
    g = torch.Generator().manual_seed(0)
    community = torch.arange(GRAPH_NODES) * GRAPH_CLASSES // GRAPH_NODES
    same = community[:, None] == community[None, :]
    p = torch.where(same, torch.tensor(0.05), torch.tensor(0.005))
    upper = torch.triu(torch.rand(GRAPH_NODES, GRAPH_NODES, generator=g) < p, diagonal=1)
    src, dst = (upper | upper.T).nonzero(as_tuple=True)
    return torch.stack([src, dst]), community


def node_classifier(conv, width=None):
    """Two layers `conv` over the one graph's nodes, ReLU between, logits a node [nodes, classes]."""
    import torch
    import torch.nn as nn

    class NodeClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("edge_index", block_model_edges()[0])
            self.conv1 = conv(GRAPH_FEATURES, HIDDEN)
            self.conv2 = conv(width or HIDDEN, GRAPH_CLASSES)

        def forward(self, x):  # (1, nodes, features)
            h = torch.relu(self.conv1(x[0], self.edge_index))
            return self.conv2(h, self.edge_index)

    return NodeClassifier()


def node_data(samples, rng):
    """(features [samples, nodes, features], labels [samples, nodes]): each community's mean
    plus noise; a fifth of the nodes labeled, the others -100 (ignored by the loss)."""
    import numpy as np
    community = block_model_edges()[1].numpy()
    means = rng.standard_normal((GRAPH_CLASSES, GRAPH_FEATURES))
    x = means[community] + 2.0 * rng.standard_normal((samples, GRAPH_NODES, GRAPH_FEATURES))
    labels = np.where(rng.random((samples, GRAPH_NODES)) < 0.2, community, -100)
    return x.astype(np.float32), labels.astype(np.int64)


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


def node_builders():
    """row name (after "pyg ") -> constructor of the node classification rows."""
    if not pyg_available():
        return {}
    import torch_geometric.nn as gnn
    heads = 4
    return {
        "gcn (node classification)": lambda: node_classifier(gnn.GCNConv),
        "graphsage (node classification)": lambda: node_classifier(gnn.SAGEConv),
        "gat (node classification; torch.export)": lambda: node_classifier(
            lambda i, o: gnn.GATConv(i, o // heads if o == HIDDEN else o,
                                     heads=heads if o == HIDDEN else 1)),
    }


def builders():
    """row name (after "pyg ") -> constructor; empty without torch_geometric."""
    return _builders() if pyg_available() else {}
