#include "loadgen/progress.h"

#include <fmt/format.h>

namespace spillway::loadgen {

std::string ProgressLine(const Progress& p) {
  const double goodput = p.elapsed_s > 0 ? static_cast<double>(p.good) / p.elapsed_s : 0.0;
  return fmt::format("{:7.1f}/{:g} s  offered {}  in flight {}  shed {}  goodput {:.2f} req/s",
                     p.elapsed_s, p.span_s, p.offered, p.in_flight, p.shed, goodput);
}

}  // namespace spillway::loadgen
