#!/usr/bin/env bash
# bad-image-inputs.sh CANOPY WRITE_TEST_VOLUMES WORKDIR
# Every image input path of the canopy CLI against damaged and odd files, generated here from a small
# synthetic volume (canopyWriteTestVolumes) and, when present, colin27: truncated and short voxel data
# in each format (NIfTI .nii/.nii.gz, NRRD attached/detached/gzip, MetaImage raw/compressed, a DICOM
# series), NaN volumes, and the image rows of the bad-input sweep (issue 8). Each bad input must give
# a one-line error naming the parameter and the file, exit 1..125, and no output file
# (expect-error.sh); a volume with some NaN voxels must succeed with exactly one warning.
set -u
canopy=$1
writer=$2
work=$3
expect=$(dirname "$0")/expect-error.sh
rm -rf "$work" && mkdir -p "$work/bad"
v=$work/v
b=$work/bad
"$writer" "$v" >/dev/null 2>&1 || { echo "FAIL: $writer could not write the test volumes"; exit 1; }
failures=0

# check NAME REGEX COMMAND...: the command fails cleanly with REGEX on a single stderr line.
check() {
  local name=$1 out
  shift
  rm -rf "$work"/never* # a previous row's stray output must not fail this one
  if out=$("$expect" "$@" 2>&1) && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
    echo "ok   $name: ${out#ok: }"
  else
    echo "FAIL $name"
    printf '%s\n' "$out"
    failures=$((failures + 1))
  fi
}
cut_to() { truncate -s $(($(stat -c %s "$2") * $1 / 100)) "$2"; } # cut_to PERCENT FILE
copy() { cp "$v/$1" "$b/$2"; }

# A tiny PBT and forest trained on the intact volume, for classify / segment / predict-forest.
"$canopy" train-pbt --image "$v/volume.nii.gz" --label "$v/label.nii.gz" --out "$work/pbt.json" --device cpu \
  --quiet --depth 1 --learners 2 --features 20 --positives 40 --negatives 40 --spacing 1 --box-mm 4 >/dev/null 2>&1 ||
  { echo "FAIL: cannot train the test PBT"; exit 1; }
"$canopy" train-forest --image "$v/volume.nii.gz" --label "$v/label.nii.gz" --out "$work/forest.json" --device cpu \
  --quiet --trees 1 --depth 2 >/dev/null 2>&1 || { echo "FAIL: cannot train the test forest"; exit 1; }

# ---- truncated or short voxel data, one file per format (read by canopy augment) ----
copy volume.nii.gz trunc.nii.gz && cut_to 50 "$b/trunc.nii.gz"
copy volume.nii trunc.nii && cut_to 50 "$b/trunc.nii"
copy volume.nrrd trunc.nrrd && cut_to 50 "$b/trunc.nrrd"
copy volume-gzip.nrrd trunc-gzip.nrrd && cut_to 50 "$b/trunc-gzip.nrrd"
copy volume-detached.nhdr short-detached.nhdr && cp "$v/volume-detached.raw" "$b/volume-detached.raw" &&
  cut_to 50 "$b/volume-detached.raw"
copy volume-detached-gzip.nhdr short-detached-gzip.nhdr && cp "$v/volume-detached-gzip.raw.gz" "$b/" &&
  cut_to 50 "$b/volume-detached-gzip.raw.gz"
copy volume.mha trunc.mha && cut_to 50 "$b/trunc.mha"
copy volume-compressed.mha trunc-compressed.mha && cut_to 50 "$b/trunc-compressed.mha"
copy volume-mhd.mhd short.mhd && cp "$v/volume-mhd.raw" "$b/" && cut_to 50 "$b/volume-mhd.raw"
mkdir -p "$b/dicom-cut" "$b/dicom-gap"
cp "$v"/dicom/*.dcm "$b/dicom-cut/" && cut_to 70 "$b/dicom-cut/slice107.dcm"
cp "$v"/dicom/*.dcm "$b/dicom-gap/" && rm "$b/dicom-gap/slice107.dcm"

out=$work/never.nrrd
check truncated-nii.gz "--image $b/trunc.nii.gz: the compressed data ends early" \
  "$canopy" augment --image "$b/trunc.nii.gz" --out-image "$out"
check truncated-nii "--image $b/trunc.nii: the voxel data is short" \
  "$canopy" augment --image "$b/trunc.nii" --out-image "$out"
check truncated-nrrd "--image $b/trunc.nrrd: the voxel data is short" \
  "$canopy" augment --image "$b/trunc.nrrd" --out-image "$out"
check truncated-nrrd-gzip "--image $b/trunc-gzip.nrrd: the compressed data ends early" \
  "$canopy" augment --image "$b/trunc-gzip.nrrd" --out-image "$out"
check short-detached-raw "--image $b/short-detached.nhdr: the voxel data is short .* in the data file .*volume-detached.raw" \
  "$canopy" augment --image "$b/short-detached.nhdr" --out-image "$out"
check short-detached-gzip "--image $b/short-detached-gzip.nhdr: the compressed data ends early .*volume-detached-gzip.raw.gz" \
  "$canopy" augment --image "$b/short-detached-gzip.nhdr" --out-image "$out"
check truncated-mha-raw "--image $b/trunc.mha: the voxel data is short" \
  "$canopy" augment --image "$b/trunc.mha" --out-image "$out"
check truncated-mha-compressed "--image $b/trunc-compressed.mha: the compressed data ends early" \
  "$canopy" augment --image "$b/trunc-compressed.mha" --out-image "$out"
check short-mhd-raw "--image $b/short.mhd: the voxel data is short .* in the data file .*volume-mhd.raw" \
  "$canopy" augment --image "$b/short.mhd" --out-image "$out"
check dicom-file-cut "--image $b/dicom-cut: .*slice107.dcm" \
  "$canopy" augment --image "$b/dicom-cut" --out-image "$out"
check dicom-slice-missing "--image $b/dicom-gap: the DICOM slices are not evenly spaced" \
  "$canopy" augment --image "$b/dicom-gap" --out-image "$out"

# ---- the same truncated file through every subcommand that reads images ----
t=$b/trunc.nii.gz
ends="the compressed data ends early"
check classify "--input $t: $ends" "$canopy" classify --model "$work/pbt.json" --input "$t" \
  --output "$work/never.nii.gz" --device cpu --quiet
check segment "--input $t: $ends" "$canopy" segment --model "$work/pbt.json" --input "$t" \
  --output "$work/never.nii.gz" --device cpu --quiet
check train-pbt-image "--image $t: $ends" "$canopy" train-pbt --image "$t" --label "$v/label.nii.gz" \
  --out "$work/never.json" --device cpu --quiet
check train-pbt-label "--label $t: $ends" "$canopy" train-pbt --image "$v/volume.nii.gz" --label "$t" \
  --out "$work/never.json" --device cpu --quiet
check train-forest "--image $t: $ends" "$canopy" train-forest --image "$t" --label "$v/label.nii.gz" \
  --out "$work/never.json" --device cpu --quiet
check predict-forest "--input $t: $ends" "$canopy" predict-forest --model "$work/forest.json" --input "$t" \
  --output "$work/never.nii.gz" --device cpu
check mesh "--input $t: $ends" "$canopy" mesh --input "$t" --output "$work/never.vtk"
check evaluate "--test $t: $ends" "$canopy" evaluate --test "$t" --reference "$v/label.nii.gz"
check augment-label "--label $t: $ends" "$canopy" augment --image "$v/volume.nii.gz" --label "$t" \
  --out-image "$out" --out-label "$work/never-label.nrrd"
entry='{"image": "bad/trunc.nii.gz", "label": "v/label.nii.gz"}'
printf '{"training": [%s, %s, %s, %s, %s]}\n' "$entry" "$entry" "$entry" "$entry" "$entry" >"$work/dataset.json"
check msd-experiment "--dataset image .*trunc.nii.gz: $ends" "$canopy" msd-experiment \
  --dataset "$work/dataset.json" --out "$work/never-experiment" --device cpu --quiet
if [ -f /usr/share/mricron/templates/ch2.nii.gz ]; then # issue 8's example: colin27 cut to half its bytes
  cp /usr/share/mricron/templates/ch2.nii.gz "$b/ch2-half.nii.gz" && cut_to 50 "$b/ch2-half.nii.gz"
  check colin27-half "--input $b/ch2-half.nii.gz: $ends" "$canopy" classify --model "$work/pbt.json" \
    --input "$b/ch2-half.nii.gz" --output "$work/never.nii.gz" --device cpu --quiet
else
  echo "skip colin27-half: /usr/share/mricron/templates/ch2.nii.gz is absent (Debian package mricron-data)"
fi

# ---- non-finite voxels ----
check all-nan "--input $v/all-nan.nii.gz: every voxel is NaN or infinite" "$canopy" classify \
  --model "$work/pbt.json" --input "$v/all-nan.nii.gz" --output "$work/never.nii.gz" --device cpu --quiet
stderr=$("$canopy" classify --model "$work/pbt.json" --input "$v/some-nan.nii.gz" --output "$work/some-nan.nii.gz" \
  --device cpu --quiet 2>&1 >/dev/null)
status=$?
warning="canopy: warning: --input $v/some-nan.nii.gz: 3 of 7680 voxels are NaN or infinite; they are read as 0"
if [ $status -eq 0 ] && [ "$stderr" = "$warning" ] && [ -f "$work/some-nan.nii.gz" ]; then
  echo "ok   some-nan: exit 0, one warning: $stderr"
else
  echo "FAIL some-nan: exit $status, output $([ -f "$work/some-nan.nii.gz" ] && echo written || echo missing), stderr:"
  printf '%s\n' "$stderr"
  failures=$((failures + 1))
fi

# ---- the image rows of the bad-input sweep ----
: >"$b/empty.nii.gz"
head -c 4096 /dev/urandom >"$b/garbage.nii.gz"
head -c 4096 /dev/urandom >"$b/garbage.nrrd"
printf 'NRRD0004\ntype: float\ndimension: 3\nsizes: 4 4\nencoding: raw\n\n' >"$b/bad-header.nrrd"
sed 's/^ElementSpacing = .*/ElementSpacing = 0 1 1.5/' "$v/volume.mha" >"$b/zero-spacing.mha"
check missing "--image $b/nonexistent.nii.gz: no such file" \
  "$canopy" augment --image "$b/nonexistent.nii.gz" --out-image "$out"
check empty "--image $b/empty.nii.gz: the file is empty" "$canopy" augment --image "$b/empty.nii.gz" --out-image "$out"
check garbage-nii.gz "--image $b/garbage.nii.gz: " "$canopy" augment --image "$b/garbage.nii.gz" --out-image "$out"
check garbage-nrrd "--image $b/garbage.nrrd: " "$canopy" augment --image "$b/garbage.nrrd" --out-image "$out"
check nrrd-bad-header "--image $b/bad-header.nrrd: cannot read the image header" "$canopy" augment \
  --image "$b/bad-header.nrrd" --out-image "$out"
check 2d "--input $v/slice2d.nii.gz: expected a 3D volume, the file has 2" "$canopy" classify \
  --model "$work/pbt.json" --input "$v/slice2d.nii.gz" --output "$work/never.nii.gz" --device cpu --quiet
check 4d "--input $v/volume4d.nii.gz: expected a 3D volume, the file has 4" "$canopy" classify \
  --model "$work/pbt.json" --input "$v/volume4d.nii.gz" --output "$work/never.nii.gz" --device cpu --quiet
check vector "--input $v/vector.nrrd: expected a scalar image, the file has 3 components" "$canopy" classify \
  --model "$work/pbt.json" --input "$v/vector.nrrd" --output "$work/never.nii.gz" --device cpu --quiet
check one-voxel "--input $v/one-voxel.nii.gz: the volume holds a single voxel" "$canopy" classify \
  --model "$work/pbt.json" --input "$v/one-voxel.nii.gz" --output "$work/never.nii.gz" --device cpu --quiet
check zero-spacing "--input $b/zero-spacing.mha: the voxel spacing along axis 0 is 0" "$canopy" classify \
  --model "$work/pbt.json" --input "$b/zero-spacing.mha" --output "$work/never.nii.gz" --device cpu --quiet
check grids-train-pbt "--label $v/label-other-grid.nii.gz: its grid .* differs from --image" "$canopy" train-pbt \
  --image "$v/volume.nii.gz" --label "$v/label-other-grid.nii.gz" --out "$work/never.json" --device cpu --quiet
check grids-train-forest "--label $v/label-other-grid.nii.gz: .*differs from its image" "$canopy" train-forest \
  --image "$v/volume.nii.gz" --label "$v/label-other-grid.nii.gz" --out "$work/never.json" --device cpu --quiet
check grids-augment "--label $v/label-other-grid.nii.gz: its grid differs from --image" "$canopy" augment \
  --image "$v/volume.nii.gz" --label "$v/label-other-grid.nii.gz" --out-image "$out" --out-label "$work/never-l.nrrd"
check grids-evaluate "$v/label-other-grid.nii.gz" "$canopy" evaluate --test "$v/label.nii.gz" \
  --reference "$v/label-other-grid.nii.gz"

# ---- headers that break ITK 5.2 itself (found by Testing/Fuzz; docs/RELIABILITY.md, Fuzzing) ----
# A NaN or a huge sform/qform entry makes ITK's NIfTI orientation SVD abort or loop forever; the
# MetaImage one hangs MetaIO's decompression. Each must be refused within seconds.
findings=$(dirname "$0")/../Fuzz/findings
check itk-nifti-nan-orientation "--image .*itk-nifti-nonfinite-qform-abort.nii: " \
  timeout 60 "$canopy" augment --image "$findings/itk-nifti-nonfinite-qform-abort.nii" --out-image "$out"
check itk-nifti-huge-orientation "--image .*itk-nifti-svd-hang.nii: the NIfTI header's .* is .* within 1e6 mm" \
  timeout 60 "$canopy" augment --image "$findings/itk-nifti-svd-hang.nii" --out-image "$out"
check itk-metaio-uncompress-hang "--image .*itk-metaio-uncompress-hang.mha: " \
  timeout 60 "$canopy" augment --image "$findings/itk-metaio-uncompress-hang.mha" --out-image "$out"
# A .nrrd holding "DICM" where DICOM's magic sits: ITK's probe of every reader let GDCM assert (abort);
# the reader is now chosen by the file name's extension first (finding 11).
check itk-gdcm-probe-abort "--image .*itk-gdcm-probe-abort.nrrd: cannot read the image header" \
  timeout 60 "$canopy" augment --image "$findings/itk-gdcm-probe-abort.nrrd" --out-image "$out"

echo "$failures failure(s)"
[ $failures -eq 0 ]
