#include "common/spmd_vocabulary.h"

#include <array>
#include <utility>

namespace harness::spmd {
namespace {

constexpr std::array<std::pair<OperatorKind, const char*>, 9> kOperatorWords = {{
    {OperatorKind::kTokens, "tokens"},
    {OperatorKind::kEmbedding, "embedding"},
    {OperatorKind::kNorm, "norm"},
    {OperatorKind::kLinear, "linear"},
    {OperatorKind::kAttention, "attention"},
    {OperatorKind::kActivation, "activation"},
    {OperatorKind::kAdd, "add"},
    {OperatorKind::kExperts, "experts"},
    {OperatorKind::kLoss, "loss"},
}};

constexpr std::array<std::pair<SignatureKind, const char*>, 10> kSignatureWords = {{
    {SignatureKind::kData, "data"},
    {SignatureKind::kSequence, "sequence"},
    {SignatureKind::kReplicated, "replicated"},
    {SignatureKind::kColumn, "column"},
    {SignatureKind::kRow, "row"},
    {SignatureKind::kFeatures, "features"},
    {SignatureKind::kHeads, "heads"},
    {SignatureKind::kPartial, "partial"},
    {SignatureKind::kVocab, "vocab"},
    {SignatureKind::kExperts, "experts"},
}};

template <typename Kind, size_t N>
const char* word_of(const std::array<std::pair<Kind, const char*>, N>& words, Kind kind) {
  for (const auto& [k, word] : words) {
    if (k == kind) return word;
  }
  return "?";
}

template <typename Kind, size_t N>
std::optional<Kind> kind_of(const std::array<std::pair<Kind, const char*>, N>& words,
                            const std::string& text) {
  for (const auto& [kind, word] : words) {
    if (text == word) return kind;
  }
  return std::nullopt;
}

}  // namespace

const char* to_text(OperatorKind kind) { return word_of(kOperatorWords, kind); }
const char* to_text(SignatureKind kind) { return word_of(kSignatureWords, kind); }

std::optional<OperatorKind> parse_operator_kind(const std::string& text) {
  return kind_of(kOperatorWords, text);
}

std::optional<SignatureKind> parse_signature_kind(const std::string& text) {
  return kind_of(kSignatureWords, text);
}

bool sums_weight_gradients(SignatureKind kind) {
  return kind == SignatureKind::kData || kind == SignatureKind::kSequence;
}

}  // namespace harness::spmd
