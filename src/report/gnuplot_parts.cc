#include "report/gnuplot_parts.h"

#include <fmt/format.h>

#include <iterator>

namespace spillway::gnuplot {
namespace {

// Okabe & Ito's colour-blind-safe palette (without its yellow, too pale on white).
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000"};
constexpr std::size_t kNumColours = std::size(kColours);

}  // namespace

std::string Header(const std::string& svg, int width_px, int height_px) {
  return fmt::format(
      "\nreset\n"
      "set terminal svg size {},{} fixed noenhanced font 'sans-serif,12' "
      "background rgb 'white'\n"
      "set output {}\n"
      "set border 3 lc rgb '#444444'\n"
      "set tics nomirror\n"
      "set grid ytics lc rgb '#e0e0e0' lw 1 dt 1\n"
      "set key outside right top samplen 2\n",
      width_px, height_px, GnuplotQuote(svg));
}

std::string RunStyle(std::size_t i, bool dashed) {
  const std::string colour = fmt::format("lc rgb '{}'", RunColour(i));
  return dashed ? fmt::format("{} dt {} lw 2", colour, 1 + i / kNumColours) : colour;
}

double AxisTop(double max) { return max > 0 ? max * 1.12 : 1.0; }

}  // namespace spillway::gnuplot

namespace spillway {

std::string RunColour(std::size_t i) { return gnuplot::kColours[i % gnuplot::kNumColours]; }

}  // namespace spillway
