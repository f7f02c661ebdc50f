#!/usr/bin/env bash
# Re-measures the committed CPU profiles in profiles/<model>-cpu/ (graph.txt, profile.json,
# env.json) and the Gloo communication profile in profiles/gloo-2ranks-cpu/. Batch 8 of
# 3x64x64 images (the mlp: 64 features) keeps a ResNet-50 profile to a few minutes with
# Debian's LibTorch on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
for model in mlp resnet18 resnet50 vgg19; do
  shape=3,64,64; [[ $model == mlp ]] && shape=64
  build/harness profile layers --model "$model" --batch 8 --input-shape "$shape" \
    --repetitions 5 --warmup 1 --out "profiles/$model-cpu"
done
# The 4-hidden-layer MLP of width 1024 that experiments/emulated_simulator_levels_4.yaml trains
# (the stand-in profile of experiments/simulate_emulated_levels_4.yaml).
build/harness profile layers --model mlp --depth 4 --width 1024 --batch 8 --input-shape 64 \
  --repetitions 5 --warmup 1 --out profiles/mlp4-cpu
# experiments/simulate_moe_bandwidth.yaml's BERT-MoE (4 layers of width 256, 8 experts in every
# other one, top-2, 64 tokens), with the AdamW step its ZeRO stages divide.
build/harness profile layers --model bert_moe --depth 4 --width 256 --input-shape 64 \
  --moe 8,2,1.25,2 --optimizer adamw --batch 8 --repetitions 5 --warmup 1 \
  --out profiles/bert_moe-cpu
build/harness profile comm --world 2 --sizes 8:64M:x4 --iterations 10 --warmup 3 \
  --out profiles/gloo-2ranks-cpu
# The raw per-rank logs are not part of a profile.
rm -f profiles/gloo-2ranks-cpu/rank*.stdout profiles/gloo-2ranks-cpu/rank*.stderr \
  profiles/gloo-2ranks-cpu/comm-raw.json
