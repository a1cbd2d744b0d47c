"""Writes a training step for comm-merge-buckets whose parameters are a
profile's layers (one 1-D parameter each, forward order), their gradients in
backprop order, each all-reduced and applied, as comm-insert-allreduce leaves
them:  profile_to_step.py PROFILE.json > STEP.mlir"""
import json
import sys

layers = json.load(open(sys.argv[1]))["layers"]
out = ["module {"]
for layer in layers:
    out.append(f'  train.parameter @"{layer["name"]}" trainable : tensor<{layer["numel"]}xf32>')
args = ", ".join(f"%d{i}: tensor<{layer['numel']}xf32>" for i, layer in enumerate(layers))
out.append(f"  func.func @train_step({args}) {{")
for k, i in enumerate(reversed(range(len(layers)))):
    t = f"tensor<{layers[i]['numel']}xf32>"
    name = layers[i]["name"]
    out += [f'    %g{i} = train.gradient @"{name}", %d{i} {{backprop_index = {k} : i64}} : {t}',
            f"    %r{i} = comm.all_reduce_start %g{i} : {t}",
            f"    %a{i} = comm.wait %r{i} : !comm.request<{t}>",
            f'    train.sgd_update @"{name}", %a{i} : {t}']
out += ["    return", "  }", "}"]
print("\n".join(out))
