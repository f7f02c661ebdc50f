// The quantities of an emulated link as people write them for tc: rates ("100mbit", "1gbit",
// "2.5gbit", bits per second), delays ("100us", "1ms", "0.5s") and loss ("0.1%"). Parsed once
// into numbers, printed back in the form tc takes.
#pragma once

#include <string>

namespace harness {

// Bits per second of "<number><unit>" with unit bit, kbit, mbit, gbit (decimal, as tc's) or
// bps/kbps/mbps/gbps (bytes, x8). std::invalid_argument naming what was expected otherwise;
// at least 8 kbit/s and at most 400 gbit/s.
double parse_link_rate(const std::string& text);

// Seconds of "<number>us|ms|s"; 0 to 10 s.
double parse_link_delay(const std::string& text);

// Percent of "<number>%" or "<number>"; 0 to 100.
double parse_link_loss(const std::string& text);

// "1000000kbit", "250us", "0.1%": exact forms for tc's command line.
std::string tc_rate(double bits_per_second);
std::string tc_delay(double seconds);
std::string tc_loss(double percent);

}  // namespace harness
