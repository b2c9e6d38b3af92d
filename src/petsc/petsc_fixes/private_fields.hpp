// The one adapter through which the glue writes PETSc's private fields
// (include/petsc/private/matimpl.h, petscimpl.h). Each function names the field and why no public
// call does the same. Not covered: the operation tables (A->ops, F->ops, C->ops->product*), which
// are how PETSc's own types derive from one another.
#pragma once
#include <petsc/private/matimpl.h>

namespace pspmv
{
namespace glue
{
namespace private_fields
{

/* A->nonzerostate. No public call increases the nonzero state without a new pattern: after
   SeqAIJ's code compacted an AIJCUSPARSE matrix's host arrays, AIJCUSPARSE must rebuild its device
   copy whole (it does so for a new nonzero state only). */
inline void IncreaseNonzeroState(Mat A)
{
  A->nonzerostate++;
}

/* A->boundtocpu. MatBindToCPU() during PETSc's hash assembly would switch the hash's operations,
   which the hash then overwrites at its end: the flag is recorded, the switch applied after the
   hash (there is no public call that sets the flag alone). */
inline void SetBoundToCPUFlag(Mat A, PetscBool flg)
{
  A->boundtocpu = flg;
}

/* ((PetscObject)X)->type_name, the string itself. PetscObjectChangeTypeName() frees the old string,
   to which pointers from MatGetType() may still point; presenting a matrix under its base type's
   name for the base type's code (which compares exact type names) swaps the strings instead and
   gives back the old one. Returns the string X carried. */
inline char *SwapTypeNameString(Mat X, char *name)
{
  char *old                   = ((PetscObject)X)->type_name;
  ((PetscObject)X)->type_name = name;
  return old;
}
inline const char *TypeNameString(Mat X)
{
  return ((PetscObject)X)->type_name;
}

/* X->form_explicit_transpose. MatSetOption(X, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_FALSE) destroys
   the transpose that a product's cuSPARSE descriptors keep pointing to; the flag is set around one
   call and put back. Returns the old value. */
inline PetscBool SwapFormExplicitTranspose(Mat X, PetscBool flg)
{
  const PetscBool old        = X->form_explicit_transpose;
  X->form_explicit_transpose = flg;
  return old;
}

/* Mat_Product::B. MatProductReplaceMats() with a matrix of another type destroys the product's
   intermediate data and sets it up anew; a phase that must run on another copy of B swaps the
   pointer around the phase. Returns the old B. */
inline Mat SwapProductB(Mat_Product *p, Mat B)
{
  Mat old = p->B;
  p->B    = B;
  return old;
}

/* Mat_Product::data, destroy and view: the intermediate data of a product, its destructor and
   its viewer. PETSc has no public call that attaches data to a product; ours is chained in front
   of the base type's (which its phases and viewer read) and the base type's is put back around
   each of them. */
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscErrorCode (*ProductDestroyFn)(void *);
#else
typedef PetscCtxDestroyFn *ProductDestroyFn;
#endif
struct ProductData {
  void            *data                    = nullptr;
  ProductDestroyFn destroy                 = nullptr;
  PetscErrorCode (*view)(Mat, PetscViewer) = nullptr;
};
/* p's data, destroy and view, leaving them NULL on p. */
inline ProductData TakeProductData(Mat_Product *p)
{
  ProductData d;
  d.data     = p->data;
  d.destroy  = p->destroy;
  d.view     = p->view;
  p->data    = nullptr;
  p->destroy = nullptr;
  p->view    = nullptr;
  return d;
}
inline void PutProductData(Mat_Product *p, const ProductData &d)
{
  p->data    = d.data;
  p->destroy = d.destroy;
  p->view    = d.view;
}
/* Frees d's data with its destroy (which takes the data in 3.22, its address from 3.23 on). */
inline PetscErrorCode DestroyProductData(ProductData *d)
{
  PetscFunctionBegin;
#if PETSC_VERSION_LT(3, 23, 0)
  if (d->destroy) PetscCall((*d->destroy)(d->data));
#else
  if (d->destroy) PetscCall((*d->destroy)(&d->data));
#endif
  *d = ProductData();
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace private_fields
} // namespace glue
} // namespace pspmv
