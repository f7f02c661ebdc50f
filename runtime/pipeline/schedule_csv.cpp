#include "runtime/pipeline/schedule_csv.h"

#include <sstream>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace runtime {

namespace {

using Kind = PipelineAction::Kind;

constexpr std::pair<const char*, Kind> kTypes[] = {
    {"SEND_F", Kind::kSendActivations},
    {"RECV_F", Kind::kRecvActivations},
    {"SEND_B", Kind::kSendGradients},
    {"RECV_B", Kind::kRecvGradients},
    {"F", Kind::kForward},
    {"B", Kind::kBackward},
    {"I", Kind::kBackwardInput},
    {"W", Kind::kBackwardWeight},
};

std::string trimmed(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  std::string cell = text.substr(begin, end - begin);
  if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return cell;
}

// Digits at `at`, as a number (at most 6 of them); moves `at` past them.
int read_number(const std::string& text, size_t& at) {
  const size_t begin = at;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
  if (at == begin || at - begin > 6) return -1;
  return std::stoi(text.substr(begin, at - begin));
}

}  // namespace

PipelineAction parse_action(const std::string& cell) {
  const std::string expected =
      " (expected [stage][F|B|I|W|SEND_F|RECV_F|SEND_B|RECV_B][micro-batch], e.g. 1F0)";
  size_t at = 0;
  const int stage = read_number(cell, at);
  if (stage < 0)
    throw std::invalid_argument("'" + cell + "' does not start with a stage" + expected);
  for (const auto& [name, kind] : kTypes) {
    const std::string type = name;
    if (cell.compare(at, type.size(), type) != 0) continue;
    size_t after = at + type.size();
    const int micro_batch = read_number(cell, after);
    if (micro_batch < 0 || after != cell.size()) break;
    return {kind, stage, micro_batch};
  }
  for (const char* other : {"UNSHARD", "RESHARD", "REDUCE_GRAD"}) {
    if (cell.compare(at, std::string(other).size(), other) == 0) {
      throw std::invalid_argument("'" + cell +
                                  "' is an FSDP action, which the harness's pipelines "
                                  "do not run (their stages are not sharded)");
    }
  }
  throw std::invalid_argument("'" + cell + "' is not an action" + expected);
}

std::vector<PipelineAction> parse_actions(const std::string& order) {
  std::vector<PipelineAction> actions;
  std::istringstream words(order);
  for (std::string word; words >> word;) actions.push_back(parse_action(word));
  return actions;
}

ScheduleTable read_schedule_csv(const std::string& text, const std::string& source) {
  ScheduleTable table;
  table.schedule = PipelineSchedule::kCsv;
  table.actions.clear();
  std::vector<int> row_of_stage;
  int max_stage = -1, max_micro_batch = -1;
  size_t line_begin = 0;
  int line = 0;
  while (line_begin < text.size()) {
    size_t line_end = text.find('\n', line_begin);
    if (line_end == std::string::npos) line_end = text.size();
    std::string row = text.substr(line_begin, line_end - line_begin);
    if (!row.empty() && row.back() == '\r') row.pop_back();
    ++line;
    const int rank = static_cast<int>(table.actions.size());
    std::vector<PipelineAction> actions;
    size_t cell_begin = 0;
    while (cell_begin <= row.size()) {
      size_t cell_end = row.find(',', cell_begin);
      if (cell_end == std::string::npos) cell_end = row.size();
      const std::string cell = trimmed(row.substr(cell_begin, cell_end - cell_begin));
      const std::string where =
          source + ":" + std::to_string(line) + ":" + std::to_string(cell_begin + 1) + ": ";
      if (!cell.empty()) {
        PipelineAction action;
        try {
          action = parse_action(cell);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(where + e.what());
        }
        if (action.is_compute()) {
          if (action.stage >= static_cast<int>(row_of_stage.size())) {
            row_of_stage.resize(static_cast<size_t>(action.stage) + 1, -1);
          }
          int& owner = row_of_stage[action.stage];
          if (owner >= 0 && owner != rank) {
            throw std::invalid_argument(where + "stage " + std::to_string(action.stage) +
                                        " is on row " + std::to_string(owner + 1) +
                                        " already (a stage runs on one rank)");
          }
          owner = rank;
          max_stage = std::max(max_stage, action.stage);
          max_micro_batch = std::max(max_micro_batch, action.micro_batch);
          actions.push_back(action);
        }
      }
      cell_begin = cell_end + 1;
    }
    table.actions.push_back(std::move(actions));
    line_begin = line_end + 1;
  }
  while (!table.actions.empty() && table.actions.back().empty()) table.actions.pop_back();
  if (table.actions.empty() || max_stage < 0) {
    throw std::invalid_argument(source + ": the schedule has no F, B, I or W action");
  }
  table.ranks = static_cast<int>(table.actions.size());
  table.stages = max_stage + 1;
  table.micro_batches = max_micro_batch + 1;
  table.rank_of_stage = row_of_stage;
  for (int c = 0; c < table.stages; ++c) {
    if (table.rank_of_stage[c] < 0) {
      throw std::invalid_argument(source + ": stage " + std::to_string(c) +
                                  " has no action (stages " + std::to_string(table.stages) +
                                  " are named, 0-" + std::to_string(table.stages - 1) + ")");
    }
  }
  if (table.stages % table.ranks != 0) {
    throw std::invalid_argument(source + ": " + std::to_string(table.stages) + " stages over " +
                                std::to_string(table.ranks) +
                                " ranks: every rank must hold as many stages");
  }
  return table;
}

}  // namespace runtime
